"""SparkPipeline: the API, the three source kinds, the sinks, checkpoints and bad input.

Spark tests share the session of the `spark` fixture. Sources are parquet directories
registered as temporary views (named per test) and written batch by batch with pyarrow,
as an outside writer would. After each refresh every view, read back as a Spark
DataFrame, is compared with Spark SQL recomputing it from the tables' expected contents
(a transitive closure computed in Python for the recursive view, which Spark's
UNION ALL-only recursion cannot express).

Tests that exercise only files (sink runs, incremental state, locks, program checks,
type mapping) use the pyarrow engine of tests/spark_crash_child.py and need no Spark.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import logging
import random
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dbspc.compiler.errors import DbspcError, InputError, RuntimeSqlError, SqlError, UsageError
from dbspc.compiler.types import SqlType
from dbspc.runtime.oracle import assert_same_rows, spark_views
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.refresh import checkpoint
from dbspc.runtime.refresh.job import Job
from dbspc.runtime.refresh.schema import columns_of, create_table
from dbspc.runtime.refresh.sinks import Sinks
from dbspc.runtime.refresh.sources import AppendTable, ChangeTable, PlainTable
from dbspc.runtime.refresh.storage import LocalStorage
from dbspc.runtime.spark import SparkPipeline, read_changes, read_view
from dbspc.runtime.spark.spark_types import arrow_schema, from_spark_type
from dbspc.runtime.zset import ZSet
from tests import spark_crash_child as child

spark_test = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
_names = itertools.count()

# -- helpers ---------------------------------------------------------------------------


class Sources:
    """Source tables as parquet directories behind temporary views of the session."""

    def __init__(self, spark: Any, root: Path) -> None:
        self.spark = spark
        self.root = root
        self.prefix = f"src{next(_names)}_"
        self.files = itertools.count()

    def name(self, table: str) -> str:
        return self.prefix + table

    def create(self, table: str, schema: pa.Schema) -> str:
        path = self.root / table
        path.mkdir(parents=True)
        pq.write_table(schema.empty_table(), path / "empty.parquet")
        self.spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {self.name(table)} USING parquet OPTIONS (path '{path}')")
        return self.name(table)

    def add(self, table: str, data: pa.Table) -> Path:
        path = self.root / table / f"part{next(self.files):04d}.parquet"
        pq.write_table(data, path)
        return path

    def replace(self, table: str, data: pa.Table) -> None:
        for old in (self.root / table).glob("*.parquet"):
            old.unlink()
        self.add(table, data)


def spark_rows(df: Any) -> list[tuple[tuple[Any, ...], int]]:
    table = df.toArrow()
    columns = [[tuple(v) if isinstance(v, list) else v for v in c.to_pylist()] for c in table.columns]
    return sorted(Counter(zip(*columns, strict=True)).items(), key=repr)


def zset_of(rows: Counter[tuple[Any, ...]], types: tuple[SqlType, ...]) -> ZSet:
    items = [(r, w) for r, w in rows.items() if w]
    return ZSet.from_rows([r for r, _ in items], types, [w for _, w in items])


def closure(edges: Counter[tuple[Any, ...]]) -> list[tuple[tuple[Any, ...], int]]:
    """The reach view by its definition: edges, plus (e.src, r.y) where e.dst = r.x."""
    base = {e for e, w in edges.items() if w > 0}
    pairs = set(base)
    while True:
        more = pairs | {(a, d) for a, b in base for c, d in pairs if b is not None and b == c}
        if more == pairs:
            return sorted(((p, 1) for p in pairs), key=repr)
        pairs = more


# -- type mapping (no Spark session needed) --------------------------------------------


def test_spark_schema_becomes_ddl() -> None:
    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("tiny", T.ByteType()),
            T.StructField("small", T.ShortType()),
            T.StructField("n", T.IntegerType()),
            T.StructField("f", T.FloatType()),
            T.StructField("d", T.DoubleType()),
            T.StructField("price", T.DecimalType(12, 3)),
            T.StructField("name with space", T.StringType()),
            T.StructField("code", T.VarcharType(3)),
            T.StructField("ok", T.BooleanType()),
            T.StructField("day", T.DateType()),
            T.StructField("at", T.TimestampType()),
            T.StructField("wall", T.TimestampNTZType()),
            T.StructField("version", T.LongType()),
        ]
    )
    ddl = create_table("t", columns_of(arrow_schema(schema, "t"), "t", exclude=["VERSION"]))
    assert ddl == (
        "CREATE TABLE `t` (`id` BIGINT, `tiny` TINYINT, `small` SMALLINT, `n` INT, `f` FLOAT, `d` DOUBLE, "
        "`price` DECIMAL(12,3), `name with space` STRING, `code` STRING, `ok` BOOLEAN, `day` DATE, `at` TIMESTAMP, "
        "`wall` TIMESTAMP_NTZ);"
    )
    p = Pipeline.from_sql(ddl + "\nCREATE VIEW v AS SELECT `name with space`, price * 2 AS p2 FROM t;")
    assert p.view_columns("v") == ("name with space", "p2")


@pytest.mark.parametrize(
    "dtype, fragment",
    [
        (T.ArrayType(T.IntegerType()), "array<int>"),
        (T.BinaryType(), "binary"),
        (T.MapType(T.StringType(), T.IntegerType()), "map<string,int>"),
        (T.DayTimeIntervalType(), "interval day to second"),
        (T.StringType("UTF8_LCASE"), "COLLATE UTF8_LCASE"),
    ],
)
def test_unsupported_spark_type_names_table_and_column(dtype: T.DataType, fragment: str) -> None:
    with pytest.raises(InputError) as err:
        from_spark_type(dtype, "orders", "tags")
    assert "column 'tags' of table 'orders'" in str(err.value)
    assert fragment in str(err.value)


# -- the end-to-end job ------------------------------------------------------------------

ORDERS = pa.schema(
    [
        ("id", pa.int64()),
        ("cust", pa.int32()),
        ("amount", pa.decimal128(10, 2)),
        ("placed", pa.date32()),
        ("note", pa.string()),
        ("w", pa.int32()),
        ("v", pa.int64()),
    ]
)
CUSTOMERS = pa.schema([("id", pa.int32()), ("region", pa.string()), ("vip", pa.bool_()), ("batch", pa.int32())])
EVENTS = pa.schema(
    [
        ("k", pa.int32()),
        ("score", pa.float64()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("small", pa.int8()),
        ("f", pa.float32()),
        ("op", pa.string()),
        ("lsn", pa.int64()),
    ]
)
EDGES = pa.schema([("src", pa.int32()), ("dst", pa.int32())])

VIEWS = [
    """CREATE VIEW revenue AS
       SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total, MAX(o.placed) AS last_day
       FROM orders o JOIN customers c ON o.cust = c.id
       WHERE c.vip OR o.amount > 10
       GROUP BY c.region""",
    "CREATE VIEW notes AS SELECT note, cust FROM orders",
    """CREATE VIEW event_stats AS
       SELECT small, COUNT(*) AS n, SUM(score) AS s, MIN(at) AS first_at, MAX(f) AS mf FROM events GROUP BY small""",
    "CREATE VIEW order_count AS SELECT COUNT(*) AS n FROM orders",
    """CREATE VIEW reach AS WITH RECURSIVE r(x, y) AS (
         SELECT src, dst FROM edges UNION SELECT e.src, r.y FROM edges e JOIN r ON e.dst = r.x)
       SELECT x, y FROM r""",
]


def _day(n: int) -> dt.date:
    return dt.date(2024, 1, 1) + dt.timedelta(days=n)


def _at(n: int) -> dt.datetime:
    return dt.datetime(2024, 3, 1, 12, 0, tzinfo=dt.UTC) + dt.timedelta(minutes=n)


BATCHES: list[dict[str, list[tuple[Any, ...]]]] = [
    {
        "orders": [
            (1, 10, Decimal("5.00"), _day(1), "a", 1),
            (2, 10, Decimal("20.50"), _day(2), "a", 1),
            (3, 20, Decimal("7.25"), _day(3), None, 1),
            (4, 30, Decimal("99.99"), _day(4), "b", 2),  # weight 2: the same order twice
        ],
        "customers": [(10, "eu", True), (20, "us", False), (30, "us", True)],
        "events": [
            (1, 1.5, _at(1), 1, 0.5, "insert"),
            (2, 2.5, _at(2), 1, 1.5, "INSERT"),
            (3, None, _at(3), None, None, "insert"),
        ],
        "edges": [(1, 2), (2, 3), (2, 3), (None, 4)],
    },
    {
        "orders": [
            (2, 10, Decimal("20.50"), _day(2), "a", -1),  # update: delete + insert
            (2, 10, Decimal("21.00"), _day(5), "a", 1),
            (4, 30, Decimal("99.99"), _day(4), "b", -1),
            (5, 40, Decimal("1.00"), _day(6), "c", 1),
        ],
        "customers": [(40, "apac", False)],
        "events": [
            (1, 1.5, _at(1), 1, 0.5, "update_preimage"),
            (1, 3.0, _at(0), 2, 0.25, "update_postimage"),
            (3, None, _at(3), None, None, "delete"),
        ],
        "edges": [(1, 2), (2, 3), (3, 1), (4, 5)],
    },
    {
        "orders": [(1, 10, Decimal("5.00"), _day(1), "a", -1), (3, 20, Decimal("7.25"), _day(3), None, -1)],
        "customers": [],
        "events": [(4, -1.0, _at(9), 2, 2.0, "insert")],
        "edges": [(1, 2)],
    },
]


def _write_batch(src: Sources, i: int, batch: dict[str, list[tuple[Any, ...]]]) -> None:
    def table(schema: pa.Schema, rows: list[tuple[Any, ...]]) -> pa.Table:
        return pa.table({f.name: [r[j] for r in rows] for j, f in enumerate(schema)}, schema=schema)

    src.add("orders", table(ORDERS, [(*r, 100 + i) for r in batch["orders"]]))
    if batch["customers"]:
        src.add("customers", table(CUSTOMERS, [(*r, i) for r in batch["customers"]]))
    src.add("events", table(EVENTS, [(*r, 1000 + i) for r in batch["events"]]))
    src.replace("edges", table(EDGES, batch["edges"]))


def _make_job(spark: Any, tmp_path: Path, src: Sources, **options: Any) -> SparkPipeline:
    options.setdefault("publish", False)
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", change_log=True, **options)
    job.change_table("orders", source=src.name("orders"), offset="v", weight="w")
    job.append_table("customers", source=src.name("customers"), offset="batch")
    job.change_table("events", source=src.name("events"), offset="lsn", op="op")
    job.plain_table("edges", source=src.name("edges"))
    for v in VIEWS:
        job.view(v)
    return job


def _sources(spark: Any, tmp_path: Path) -> Sources:
    src = Sources(spark, tmp_path / "sources")
    src.create("orders", ORDERS)
    src.create("customers", CUSTOMERS)
    src.create("events", EVENTS)
    src.create("edges", EDGES)
    return src


class Expected:
    """The tables' contents as the test's own bookkeeping says they should be."""

    def __init__(self) -> None:
        self.tables: dict[str, Counter[tuple[Any, ...]]] = {t: Counter() for t in ("orders", "customers", "events")}
        self.tables["edges"] = Counter()

    def apply(self, batch: dict[str, list[tuple[Any, ...]]]) -> None:
        for r in batch["orders"]:
            self.tables["orders"][r[:-1]] += r[-1]
        for r in batch["customers"]:
            self.tables["customers"][r] += 1
        for r in batch["events"]:
            at = r[2].replace(tzinfo=None) if r[2] else None
            self.tables["events"][(*r[:2], at, *r[3:5])] += 1 if r[5].lower() in ("insert", "update_postimage") else -1
        self.tables["edges"] = Counter(tuple(e) for e in batch["edges"])


def check_views(spark: Any, job: SparkPipeline, expected: Expected, context: str, logs: bool = True) -> None:
    p = job.pipeline
    tables = {t: zset_of(rows, p.table_types(t)) for t, rows in expected.tables.items()}
    if job.execution == "driver":  # distributed, the tables are the executors'
        for t, z in tables.items():
            assert_same_rows(p.table_contents(t), z, f"{context}: table {t}", exact=True)
    # Spark recomputes every view but the recursive one from the expected contents.
    ddl = "\n".join(line for line in job.program_text.splitlines() if line.startswith("CREATE TABLE"))
    oracle = Pipeline.from_sql(ddl + "\n" + ";\n".join(v for v in VIEWS if "RECURSIVE" not in v) + ";")
    want = spark_views(spark, oracle, tables)
    want["reach"] = closure(expected.tables["edges"])
    for view in p.view_names():
        got = spark_rows(job.table(view))
        assert_same_rows(got, want[view], f"{context}: view {view} read back from Spark")
        if not logs:
            continue
        signed = F.when(F.col("_change_type") == "insert", 1).otherwise(-1)
        log = job.changes(view).groupBy(*p.view_columns(view)).agg(F.sum(signed))
        integral = [(tuple(r[:-1]), int(r[-1])) for r in log.collect() if r[-1]]
        assert_same_rows(integral, want[view], f"{context}: view {view}'s change log summed")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_three_source_kinds_end_to_end(spark: Any, tmp_path: Path) -> None:
    """Change tables (weight and op columns), an append-only table and a plain table feed
    a join + aggregate, a bag projection, an aggregate over every type, a global
    aggregate and a recursive view; after each refresh each view read back from Spark
    equals Spark's recomputation, and its change log sums to its contents."""
    src = _sources(spark, tmp_path)
    job = _make_job(spark, tmp_path, src)
    expected = Expected()
    for i, batch in enumerate(BATCHES):
        _write_batch(src, i, batch)
        expected.apply(batch)
        result = job.refresh()
        assert result.committed and result.refresh_id == i + 1
        assert set(result.timings) >= {"transfer", "compute", "write_back", "checkpoint", "publish", "total"}
        check_views(spark, job, expected, f"refresh {i + 1}", logs=i == len(BATCHES) - 1)
    assert job.refresh().committed is False  # nothing new: nothing written
    assert job.refresh_id == len(BATCHES)
    assert sorted(r[0] for r in job.changes("notes").select("_commit_version").distinct().collect()) == [1, 2, 3]
    job.close()

    # A restarted job resumes from the checkpoint; another reader follows the outputs.
    job = _make_job(spark, tmp_path, src, publish=True, view_prefix="crm_")
    assert job.refresh_id == len(BATCHES)
    more: dict[str, list[tuple[Any, ...]]] = {
        "orders": [(6, 20, Decimal("3.00"), _day(9), "z", 1)],
        "customers": [],
        "events": [],
        "edges": [(5, 6)],
    }
    _write_batch(src, 3, more)
    expected.apply(more)
    job.refresh()
    check_views(spark, job, expected, "after restart")
    assert spark_rows(read_view(spark, tmp_path / "out", "revenue")) == spark_rows(job.table("revenue"))
    assert spark_rows(spark.table("crm_revenue")) == spark_rows(job.table("revenue"))
    # A real catalog table: another session sees it; as plain files it is the view itself.
    assert spark_rows(spark.newSession().table("crm_revenue")) == spark_rows(job.table("revenue"))
    assert spark_rows(spark.read.parquet(job.location("revenue"))) == spark_rows(job.table("revenue"))
    plain = pq.read_table(job.location("notes").removeprefix("file://"))
    assert plain.num_rows == job.table("notes").count() and plain.column_names == list(
        job.pipeline.view_columns("notes")
    )
    assert read_changes(spark, tmp_path / "out", "notes").count() == job.changes("notes").count()
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_bad_input_is_rejected_then_recovers(spark: Any, tmp_path: Path) -> None:
    """A delete of a row that is not there, an unknown operation, a NULL offset and a
    drifted schema each give an error naming the table and columns, leave the state and
    outputs untouched, and the next refresh works once the input is fixed."""
    src = _sources(spark, tmp_path)
    job = _make_job(spark, tmp_path, src)
    expected = Expected()
    _write_batch(src, 0, BATCHES[0])
    expected.apply(BATCHES[0])
    job.refresh()
    manifest = (tmp_path / "ckpt" / "MANIFEST.json").read_bytes()
    outputs = {v: spark_rows(job.table(v)) for v in job.pipeline.view_names()}

    def unchanged() -> None:
        assert (tmp_path / "ckpt" / "MANIFEST.json").read_bytes() == manifest
        assert {v: spark_rows(job.table(v)) for v in job.pipeline.view_names()} == outputs
        assert job.refresh_id == 1

    def table(schema: pa.Schema, rows: list[tuple[Any, ...]]) -> pa.Table:
        return pa.table({f.name: [r[j] for r in rows] for j, f in enumerate(schema)}, schema=schema)

    # 1. Deleting an order that is not there.
    bad = src.add("orders", table(ORDERS, [(77, 10, Decimal("1.00"), _day(1), "x", -1, 101)]))
    with pytest.raises(InputError) as err:
        job.refresh()
    message = str(err.value)
    assert "table 'orders'" in message and "id=77" in message and "amount=" in message, message
    assert src.name("orders") in message
    unchanged()
    bad.unlink()  # the input is fixed

    # 2. An operation the job does not know.
    bad = src.add("events", table(EVENTS, [(9, 1.0, _at(1), 1, 1.0, "upsert", 1001)]))
    with pytest.raises(InputError, match=r"table 'events'.*column 'op'.*'upsert'"):
        job.refresh()
    unchanged()
    bad.unlink()

    # 3. A NULL offset.
    bad = src.add("orders", table(ORDERS, [(78, 10, Decimal("1.00"), _day(1), "x", 1, None)]))
    with pytest.raises(InputError, match=r"table 'orders'.*NULL offset in column 'v'"):
        job.refresh()
    unchanged()
    bad.unlink()

    # 4. A schema that drifted: the table was redefined with a changed and a new column.
    # The new column is fine (no view reads it); the changed type of a read column is not.
    drifted = pa.schema([("id", pa.int64()), ("region", pa.string()), ("vip", pa.bool_()), ("batch", pa.int32())])
    src.create("customers_v2", drifted.append(pa.field("tier", pa.int32())))
    view = src.name("customers")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} AS SELECT * FROM {src.name('customers_v2')}")
    with pytest.raises(InputError) as err:
        job.refresh()
    message = str(err.value)
    assert f"table 'customers' (Spark table '{view}')" in message, message
    assert "tier" not in message and "changed type(s) id INT -> BIGINT" in message, message
    unchanged()
    path = tmp_path / "sources" / "customers"
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {view} USING parquet OPTIONS (path '{path}')")

    # Fixed: the next batch applies, on the state of refresh 1.
    _write_batch(src, 1, BATCHES[1])
    expected.apply(BATCHES[1])
    assert job.refresh().refresh_id == 2
    check_views(spark, job, expected, "after the fixes", logs=False)
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_failure_after_the_step_leaves_outputs_and_reloads(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error while writing (after the circuit stepped) commits nothing; the job
    reloads its state from the checkpoint and the retried refresh is exact."""
    src = _sources(spark, tmp_path)
    job = _make_job(spark, tmp_path, src)
    expected = Expected()
    _write_batch(src, 0, BATCHES[0])
    expected.apply(BATCHES[0])
    job.refresh()
    before = spark_rows(job.table("revenue"))
    _write_batch(src, 1, BATCHES[1])
    expected.apply(BATCHES[1])
    original = checkpoint.StateStore.save

    def disk_full(self: Any, *args: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint.StateStore, "save", disk_full)
    with pytest.raises(OSError):
        job.refresh()
    assert spark_rows(job.table("revenue")) == before and job.refresh_id == 1
    monkeypatch.setattr(checkpoint.StateStore, "save", original)
    assert job.refresh().refresh_id == 2
    check_views(spark, job, expected, "after the retry")
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_runtime_error_in_a_view_is_atomic(spark: Any, tmp_path: Path) -> None:
    """Division by zero (Spark's ANSI semantics) rejects the refresh, naming the view."""
    src = Sources(spark, tmp_path / "sources")
    schema = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("batch", pa.int64())])
    src.create("t", schema)
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False)
    job.append_table("t", source=src.name("t"), offset="batch")
    job.view("CREATE VIEW q AS SELECT a, a div b AS d FROM t")
    src.add("t", pa.table({"a": [6], "b": [3], "batch": [1]}, schema=schema))
    job.refresh()
    bad = src.add("t", pa.table({"a": [1], "b": [0], "batch": [2]}, schema=schema))
    with pytest.raises(RuntimeSqlError, match="view 'q'"):
        job.refresh()
    assert spark_rows(job.table("q")) == [((6, 2), 1)]
    bad.unlink()
    src.add("t", pa.table({"a": [8], "b": [2], "batch": [2]}, schema=schema))
    assert job.refresh().refresh_id == 2
    assert spark_rows(job.table("q")) == [((6, 2), 1), ((8, 4), 1)]
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_catalog_tables_written_by_spark(spark: Any, tmp_path: Path) -> None:
    """Sources that are catalog tables (VARCHAR, DATE, TIMESTAMP, DECIMAL columns) written
    with INSERT by Spark itself: a plain table diffed by snapshot and an append table."""
    name = f"cat{next(_names)}"
    spark.sql(
        f"CREATE TABLE {name}_dim (code VARCHAR(3), day DATE, at TIMESTAMP, price DECIMAL(8,3)) "
        f"USING parquet LOCATION '{tmp_path / 'dim'}'"
    )
    facts = tmp_path / "facts"
    spark.sql(f"CREATE TABLE {name}_facts (code STRING, qty INT, batch BIGINT) USING parquet LOCATION '{facts}'")
    try:
        spark.sql(
            f"INSERT INTO {name}_dim VALUES ('a', DATE'2024-02-29', TIMESTAMP'2024-01-01 10:00:00', 1.250), "
            "('b', NULL, NULL, 2.5), ('b', NULL, NULL, 2.5)"
        )
        spark.sql(f"INSERT INTO {name}_facts VALUES ('a', 2, 1), ('b', 3, 1), ('c', 4, 1)")
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
        job.plain_table("dim", source=f"{name}_dim").append_table("facts", source=f"{name}_facts", offset="batch")
        job.view(
            "CREATE VIEW priced AS SELECT d.code, d.day, d.at, f.qty * d.price AS amount "
            "FROM facts f JOIN dim d ON f.code = d.code"
        )
        assert "`code` STRING, `day` DATE, `at` TIMESTAMP, `price` DECIMAL(8,3)" in job.program_text
        job.refresh()
        query = "SELECT d.code, d.day, d.at, f.qty * d.price AS amount FROM {f} f JOIN {d} d ON f.code = d.code"
        want = spark.sql(query.format(f=f"{name}_facts", d=f"{name}_dim"))
        assert spark_rows(spark.table(f"{name}_priced")) == spark_rows(want)
        spark.sql(
            f"INSERT OVERWRITE {name}_dim VALUES ('a', DATE'2024-03-01', TIMESTAMP'2024-01-01 10:00:00', 1.250), "
            "('b', NULL, NULL, 2.5), ('c', NULL, TIMESTAMP'2025-06-01 00:00:00', 0.001)"
        )
        spark.sql(f"INSERT INTO {name}_facts VALUES ('c', 5, 2)")
        result = job.refresh()
        assert result.rows_read == {"dim": 4, "facts": 1}  # dim: -a, +a', -b (one of two), +c
        want = spark.sql(query.format(f=f"{name}_facts", d=f"{name}_dim"))
        assert spark_rows(spark.table(f"{name}_priced")) == spark_rows(want)
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_dim")
        spark.sql(f"DROP TABLE IF EXISTS {name}_facts")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_registration_errors(spark: Any, tmp_path: Path) -> None:
    src = Sources(spark, tmp_path / "sources")
    name = src.create("t", pa.schema([("a", pa.int32()), ("tags", pa.list_(pa.int32())), ("v", pa.int64())]))
    # A column of a type dbspc cannot hold is fine while no view reads it.
    job = SparkPipeline(spark, tmp_path / "c1", output=tmp_path / "o1", publish=False)
    job.append_table("t", source=name, offset="v").view("CREATE VIEW q AS SELECT a FROM t")
    job.refresh()
    job.close()
    # Errors come from view() itself, at the view's own line and column, naming it.
    job = SparkPipeline(spark, tmp_path / "c2", output=tmp_path / "o2")
    job.append_table("t", source=name, offset="v")
    with pytest.raises(SqlError, match=r"view 'q': column 'tags' cannot be resolved.*t\.tags \(array<int>\)") as err:
        job.view("CREATE VIEW ok AS SELECT 1 AS one FROM t;\nCREATE VIEW q AS\n  SELECT a, tags FROM t")
    assert err.value.span is not None and (err.value.span.line, err.value.span.col) == (3, 13)
    with pytest.raises(SqlError, match=r"view 'w': table or view 'nope' does not exist.*register it as a source"):
        job.view("CREATE VIEW w AS SELECT * FROM nope")
    views = tmp_path / "views.sql"
    views.write_text(
        "-- the team's views\nCREATE VIEW fine AS SELECT a FROM t;\n\nCREATE VIEW bad AS SELECT b FROM t;\n"
    )
    with pytest.raises(SqlError, match=rf"^{views}:4:27: view 'bad': column 'b' cannot be resolved"):
        job.view_file(views)
    plain = src.create("u", pa.schema([("a", pa.int32()), ("v", pa.int64())]))
    job = SparkPipeline(spark, tmp_path / "c3", output=tmp_path / "o3")
    job.append_table("t", source=plain, offset="missing")
    with pytest.raises(UsageError, match=r"has no column 'missing'"):
        job.view("CREATE VIEW q AS SELECT a FROM t")
    with pytest.raises(UsageError, match="exactly one of a weight column or an op column"):
        ChangeTable("t", offset="v")
    # Misuse of the API is a UsageError, not an InputError (a batch that cannot be applied).
    assert not issubclass(UsageError, InputError) and issubclass(UsageError, DbspcError)
    with pytest.raises(UsageError, match="no views registered"):
        SparkPipeline(spark, tmp_path / "c4", output=tmp_path / "o4").refresh()
    job = SparkPipeline(spark, tmp_path / "c5", output=tmp_path / "o5", publish=False)
    job.append_table("t", source=plain, offset="v")
    job.view("CREATE VIEW q AS SELECT a FROM t")
    job.refresh()
    with pytest.raises(UsageError, match="before the first start"):
        job.view("CREATE VIEW r AS SELECT a FROM t")
    with pytest.raises(UsageError, match="no view 'nope'; the job has q"):
        job.table("nope")
    with pytest.raises(UsageError, match="view 'q' has no change log"):
        job.changes("q")
    job.close()


# -- files only: sinks, incremental state, program checks, locks ---------------------------


def _file_job(workdir: Path, views: list[str] | None = None) -> Job:
    return Job(
        child.FileEngine(workdir / "sources"),
        workdir / "checkpoint",
        workdir / "output",
        child.sources(),
        views or child.VIEWS,
        change_log=True,
    )


def test_write_back_rewrites_only_the_buckets_a_change_touches(tmp_path: Path) -> None:
    """A big view changed a little per refresh: each refresh publishes a new version in
    which only the buckets holding changed rows are new files; the others are links to
    the previous version's files. The state checkpoint also writes only new parts."""
    engine_dir = tmp_path / "sources"
    schema = pa.schema([("id", pa.int64()), ("g", pa.int32()), ("v", pa.int64())])
    (engine_dir / "t").mkdir(parents=True)
    pq.write_table(
        pa.table({"id": range(20_000), "g": [i % 5000 for i in range(20_000)], "v": [0] * 20_000}, schema=schema),
        engine_dir / "t" / "b0.parquet",
    )
    job = Job(
        child.FileEngine(engine_dir),
        tmp_path / "ckpt",
        tmp_path / "out",
        [AppendTable("t", offset="v")],
        ["CREATE VIEW big AS SELECT id, g FROM t", "CREATE VIEW per_g AS SELECT g, COUNT(*) AS n FROM t GROUP BY g"],
    )
    job.start()
    assert job._sinks is not None
    job._sinks.bucket_rows = 1024
    job.refresh()
    assert job.manifest is not None and job.manifest.sinks["big"]["buckets"] == 32
    state_files = {p.name for p in (tmp_path / "ckpt" / "state").iterdir()}
    for k in range(1, 13):
        before = job.manifest.sinks["big"]
        inodes = {
            b: (tmp_path / "out" / before["version"] / f"part-{b:05d}.parquet").stat().st_ino for b in before["parts"]
        }
        ids = range(20_000 + 10 * k, 20_000 + 10 * k + 10)
        pq.write_table(
            pa.table({"id": ids, "g": [1] * 10, "v": [k] * 10}, schema=schema), engine_dir / "t" / f"b{k}.parquet"
        )
        job.refresh()
        after = job.manifest.sinks["big"]
        assert after["version"] == f"big/v{k + 1:08d}" and after["retired"] == before["version"]
        shared = [
            b
            for b in after["parts"]
            if (tmp_path / "out" / after["version"] / f"part-{b:05d}.parquet").stat().st_ino == inodes.get(b)
        ]
        assert len(shared) >= 32 - 10  # at most 10 buckets touched by 10 new rows
        assert sorted(p.name for p in (tmp_path / "out" / "big").iterdir() if p.name.startswith("v")) == sorted(
            [before["version"].split("/")[1], after["version"].split("/")[1]]
        )  # the current version and the one before it, for readers still on it
        new_parts = {p.name for p in (tmp_path / "ckpt" / "state").iterdir()} - state_files
        assert sum(pl.read_ipc(tmp_path / "ckpt" / "state" / n).height for n in new_parts) < 2_000
        state_files |= new_parts
    assert job.contents("big").frame.height == 20_000 + 120
    assert pl.read_parquet(tmp_path / "out" / job.manifest.sinks["big"]["version"] / "*.parquet").height == 20_120
    job.close()


def test_restart_maps_state_parts_back_to_their_files(tmp_path: Path) -> None:
    """A restarted job knows which loaded runs are already on disk, so its first
    checkpoint does not rewrite the state it just loaded."""
    child.prepare_sources(tmp_path, 5)
    job = _file_job(tmp_path)
    child.run(job, tmp_path / "sources", 3, 5)
    job.close()
    job = _file_job(tmp_path)
    job.start()
    assert job.manifest is not None
    mapped = {name: [f for _, f in parts] for name, parts in job._store.known.items()}
    assert mapped == {name: parts for name, parts in job.manifest.state.items()}
    section, _ = job._store.save(job.refresh_id + 1, job.pipeline.state_traces())
    assert section == job.manifest.state  # nothing new to write
    job.close()


EVOLVED = [
    # revenue edited (a column more), big_orders and reach kept, event_vals dropped, one new
    """CREATE VIEW revenue AS
       SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total, MAX(o.amount) AS top
       FROM orders o JOIN customers c ON o.cust = c.id GROUP BY c.region""",
    child.VIEWS[1],
    child.VIEWS[3],
    "CREATE VIEW per_cust AS SELECT cust, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY cust",
]


def test_views_added_edited_and_dropped_without_a_replay(tmp_path: Path) -> None:
    """A changed program is bootstrapped from the checkpoint's stored tables, in one
    refresh of its own that reads no source: its views then equal those of a job that
    ran the new program from the start, unchanged views keep their published version,
    a dropped view's files go, and later refreshes go on incrementally."""
    evolved, fresh = tmp_path / "evolved", tmp_path / "fresh"
    for workdir in (evolved, fresh):
        child.prepare_sources(workdir, 7)
    job = _file_job(evolved)
    child.run(job, evolved / "sources", 6, 7)
    before = dict(job.manifest.sinks) if job.manifest else {}
    job.close()

    job = _file_job(evolved, EVOLVED)
    job.start()
    assert job.refresh_id == 7 and job.manifest is not None
    for kept in ("big_orders", "reach"):
        assert job.manifest.sinks[kept]["version"] == before[kept]["version"]  # no change: no new version
    assert job.manifest.sinks["revenue"]["version"] == "revenue/v00000007"
    assert not (evolved / "output" / "event_vals").exists()
    reference = _file_job(fresh, EVOLVED)
    child.run(reference, fresh / "sources", 6, 7)
    for view in job.pipeline.view_names():
        assert_same_rows(job.contents(view), reference.contents(view), f"view {view} after the bootstrap", exact=True)
    log = pl.read_parquet(evolved / "output" / "per_cust" / "changes" / "r00000007.parquet")
    assert set(log["_change_type"]) == {"insert"} and log.height == job.contents("per_cust").frame.height

    child.run(job, evolved / "sources", 9, 7)
    child.run(reference, fresh / "sources", 9, 7)
    assert job.refresh_id == 10 and reference.refresh_id == 9
    for view in job.pipeline.view_names():
        assert_same_rows(job.contents(view), reference.contents(view), f"view {view} later", exact=True)
    job.close()
    reference.close()


def test_a_checkpoint_of_another_circuit_is_bootstrapped_and_an_older_one_resumed(tmp_path: Path) -> None:
    """Another dbspc version may compile the same views to another circuit: the state is
    then rebuilt from the checkpoint's tables, as for an edited program. A manifest from
    before circuits were recorded resumes when its traces are the program's, and one that
    lacks only the emitted rows of a MIN/MAX (kept since) has them rebuilt."""
    views = [*EVOLVED[:2], child.VIEWS[2]]
    ran, fresh = tmp_path / "ran", tmp_path / "fresh"
    for workdir in (ran, fresh):
        child.prepare_sources(workdir, 9)
    reference = _file_job(fresh, views)
    child.run(reference, fresh / "sources", 9, 9)
    job = _file_job(ran, views)
    child.run(job, ran / "sources", 3, 9)
    job.close()

    path = ran / "checkpoint" / "MANIFEST.json"
    manifest = json.loads(path.read_text())
    assert manifest["pipeline"]["circuit"]
    manifest["pipeline"]["circuit"] = "0" * 16  # written by another compiler
    path.write_text(json.dumps(manifest))
    job = _file_job(ran, views)
    job.start()
    assert job.refresh_id == 4  # one refresh of its own: the bootstrap
    child.run(job, ran / "sources", 5, 9)
    job.close()

    manifest = json.loads(path.read_text())
    del manifest["pipeline"]["circuit"]  # from before circuits were recorded ...
    dropped = [name for name in manifest["state"] if name.endswith(".out")]
    assert dropped  # ... and before MIN/MAX kept their emitted rows
    for name in dropped:
        del manifest["state"][name]
    path.write_text(json.dumps(manifest))
    job = _file_job(ran, views)
    child.run(job, ran / "sources", 9, 9)
    assert job.refresh_id == 10  # resumed: no bootstrap
    for view in job.pipeline.view_names():
        assert_same_rows(job.contents(view), reference.contents(view), f"view {view}", exact=True)
    job.close()
    reference.close()


def test_a_program_that_cannot_be_carried_over_is_refused(tmp_path: Path) -> None:
    """Another way of reading a source, or a view reading a source column the checkpoint
    does not hold, is refused with the reason."""
    child.prepare_sources(tmp_path, 1)
    job = _file_job(tmp_path)
    job.refresh()
    job.close()
    other = Job(
        child.FileEngine(tmp_path / "sources"),
        tmp_path / "checkpoint",
        tmp_path / "output",
        [AppendTable("orders", offset="batch", source="orders_cdc"), *child.sources()[1:]],
        child.VIEWS,
    )
    with pytest.raises(UsageError, match=r"cannot be carried over.*source 'orders' was registered as"):
        other.start()
    other.close()
    # The same sources, and a view that reads a column the source never had.
    with pytest.raises(SqlError, match=r"view 'nope': column 'color' cannot be resolved"):
        _file_job(tmp_path, [*child.VIEWS, "CREATE VIEW nope AS SELECT color FROM orders"]).start()


def test_one_job_per_checkpoint(tmp_path: Path) -> None:
    child.prepare_sources(tmp_path, 1)
    job = _file_job(tmp_path)
    job.start()
    with pytest.raises(UsageError, match="in use by another running job"):
        _file_job(tmp_path).start()
    job.close()
    _file_job(tmp_path).start()


def test_global_aggregate_shows_on_an_empty_first_refresh(tmp_path: Path) -> None:
    (tmp_path / "sources" / "t").mkdir(parents=True)
    schema = pa.schema([("a", pa.int32()), ("v", pa.int64())])
    pq.write_table(schema.empty_table(), tmp_path / "sources" / "t" / "e.parquet")
    job = Job(
        child.FileEngine(tmp_path / "sources"),
        tmp_path / "c",
        tmp_path / "o",
        [AppendTable("t", offset="v")],
        ["CREATE VIEW n AS SELECT COUNT(*) AS n FROM t"],
    )
    result = job.refresh()
    assert result.committed and result.deltas["n"].to_rows() == [((0,), 1)]
    assert list(result.state) == ["%2 aggregate_incremental"] and result.state["%2 aggregate_incremental"][0] == 0
    assert job.contents("n").to_rows() == [((0,), 1)]
    assert job.refresh().committed is False
    job.close()


def test_sinks_versions_bags_and_change_feed(tmp_path: Path) -> None:
    """A version holds the view as a bag (a row of weight 2 written twice); rows that
    cancel out leave an empty table that still has a file with the schema; change files
    are staged until promoted, and a staged file of a refresh that never committed goes."""
    from dbspc.compiler.types import INT

    sinks = Sinks(LocalStorage(tmp_path), {"v": (("x",), (INT,))}, ["v"])
    state: dict[str, Any] = {}
    state = sinks.write(1, {"v": ZSet.from_rows([(1,), (2,)], (INT,), [2, 1])}, state)
    assert sorted(pl.read_parquet(tmp_path / state["v"]["version"] / "*.parquet")["x"]) == [1, 1, 2]
    sinks.promote_changes(1)
    state = sinks.write(2, {"v": ZSet.from_rows([(1,), (2,)], (INT,), [-2, -1])}, state)
    assert state["v"]["retired"] == "v/v00000001"
    assert sinks.contents("v", state["v"]).to_rows() == []
    empty = pl.read_parquet(tmp_path / state["v"]["version"] / "*.parquet")
    assert empty.height == 0 and empty.columns == ["x"]
    assert {p.name for p in (tmp_path / "v" / "changes").iterdir()} == {"r00000001.parquet", "_r00000002.parquet"}
    log = pl.read_parquet(tmp_path / "v" / "changes" / "r00000001.parquet")
    assert sorted(log.select("x", "_change_type", "_commit_version").rows()) == [
        (1, "insert", 1),
        (1, "insert", 1),
        (2, "insert", 1),
    ]
    sinks.promote_changes(1)  # refresh 2 never committed, say: its staged log goes
    assert {p.name for p in (tmp_path / "v" / "changes").iterdir()} == {"r00000001.parquet"}
    sinks.collect_garbage(state)
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == ["changes", "v00000001", "v00000002"]


def test_a_bad_delete_names_the_source_and_offsets(tmp_path: Path) -> None:
    """The dbspc error for a bad delete names the Spark table and the offset range."""
    child.prepare_sources(tmp_path, 3)
    job = _file_job(tmp_path)
    job.refresh()
    bad = pa.table(
        {
            "id": pa.array([999], pa.int64()),
            "cust": pa.array([1], pa.int32()),
            "amount": pa.array([Decimal("1.00")], pa.decimal128(10, 2)),
            "weight": pa.array([-1], pa.int32()),
            "batch": pa.array([1], pa.int64()),
        }
    )
    child.write_source(tmp_path / "sources" / "orders_cdc" / "b00001.parquet", bad)
    with pytest.raises(
        DbspcError,
        match=r"refresh 2: cannot delete 1 row\(s\) from table 'orders'.*id=999.*"
        r"Spark table 'orders_cdc', rows with batch > 0 and <= 1",
    ):
        job.refresh()
    assert job.refresh_id == 1
    job.close()
    assert json.loads((tmp_path / "checkpoint" / "MANIFEST.json").read_text())["refresh_id"] == 1


# -- ownership of outputs, rows behind the committed offset, runaway recursion ------------

_ITEMS = pa.schema([("id", pa.int64()), ("qty", pa.int32()), ("version", pa.int64())])


def _items(rows: list[tuple[int, int, int]]) -> pa.Table:
    return pa.table({f.name: [r[j] for r in rows] for j, f in enumerate(_ITEMS)}, schema=_ITEMS)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_two_pipelines_cannot_share_an_output(spark: Any, tmp_path: Path) -> None:
    """Two jobs writing one output directory would overwrite each other's view files
    (the first job's view then read the second's rows): the second is refused, and
    default outputs of same-named checkpoint folders differ."""
    sales = SparkPipeline(spark, tmp_path / "sales" / "checkpoint")
    inventory = SparkPipeline(spark, tmp_path / "inventory" / "checkpoint")
    assert sales.storage.uri() != inventory.storage.uri()
    assert sales.storage.uri().rsplit("/", 1)[1].startswith("checkpoint-")

    src = Sources(spark, tmp_path / "sources")
    src.create("s", _ITEMS)
    src.create("i", _ITEMS)
    src.add("s", _items([(1, 1, 1)]))
    src.add("i", _items([(i, i, 1) for i in range(5)]))
    jobs = []
    for name, table in (("sales", "s"), ("inventory", "i")):
        job = SparkPipeline(spark, tmp_path / name / "checkpoint", output=tmp_path / "shared", publish=False)
        job.append_table("items", source=src.name(table), offset="version")
        job.view("CREATE VIEW stock AS SELECT id, qty FROM items")
        jobs.append(job)
    jobs[0].refresh()
    with pytest.raises(
        UsageError,
        match=rf"output directory {tmp_path / 'shared'} belongs to the job of checkpoint "
        rf"{tmp_path / 'sales' / 'checkpoint'}, not to checkpoint {tmp_path / 'inventory' / 'checkpoint'}",
    ):
        jobs[1].refresh()
    assert jobs[0].table("stock").count() == 1
    assert read_view(spark, tmp_path / "shared", "stock").count() == 1
    jobs[0].close()
    jobs[1].close()
    again = SparkPipeline(spark, tmp_path / "sales" / "checkpoint", output=tmp_path / "shared", publish=False)
    again.append_table("items", source=src.name("s"), offset="version")
    again.view("CREATE VIEW stock AS SELECT id, qty FROM items")
    assert again.refresh_id == 1  # its owner resumes
    again.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_rows_behind_the_committed_offset_are_an_error(spark: Any, tmp_path: Path) -> None:
    """Rows arriving at an offset already committed would never be read: the refresh
    raises, naming the table, the offsets and a row, and changes nothing."""
    src = Sources(spark, tmp_path / "sources")
    src.create("items", _ITEMS)
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False)
    job.change_table("items", source=src.name("items"), offset="version", weight="qty")
    job.view("CREATE VIEW ids AS SELECT id, COUNT(*) AS n FROM items GROUP BY id")
    src.add("items", _items([(1, 1, 1)]))
    src.add("items", _items([(2, 1, 2)]))
    assert job.refresh().refresh_id == 1
    src.add("items", _items([(3, 1, 3)]))
    assert job.refresh().refresh_id == 2  # rows above the committed offset: fine
    manifest = (tmp_path / "ckpt" / "MANIFEST.json").read_bytes()
    # the files read so far: the next refresh checks only files added since, not every row
    assert [Path(f).name for f in json.loads(manifest)["files"]["items"]] == sorted(
        p.name for p in (tmp_path / "sources" / "items").glob("*.parquet")
    )
    src.add("items", _items([(7, 1, 2), (8, 1, 1)]))  # behind: offsets up to 3 are committed
    for _ in range(2):  # and it stays an error, not a silent skip
        with pytest.raises(
            InputError,
            match=rf"refresh 3: table 'items' \(Spark table '{src.name('items')}'\) has rows at offsets already "
            r"committed.*3 row\(s\) with version <= 3 were committed by refresh 2, now 5.*"
            r"e\.g\. \(id=\d, version=\d, qty=1\).*version > 3",
        ):
            job.refresh()
    assert job.refresh_id == 2
    assert (tmp_path / "ckpt" / "MANIFEST.json").read_bytes() == manifest
    assert sorted(r[0] for r in job.table("ids").collect()) == [1, 2, 3]
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_runaway_recursive_view_fails_fast(spark: Any, tmp_path: Path) -> None:
    """A UNION ALL recursion over a cycle never converges: with max_iterations it fails
    within seconds naming the CTE, and the committed state stays as it was."""
    import time

    src = Sources(spark, tmp_path / "sources")
    src.create("edges", pa.schema([("a", pa.int32()), ("b", pa.int32()), ("v", pa.int64())]))
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False, max_iterations=100)
    job.append_table("edges", source=src.name("edges"), offset="v")
    job.view(
        """CREATE VIEW walks AS WITH RECURSIVE w(x, y) AS (
             SELECT a, b FROM edges UNION ALL SELECT w.x, e.b FROM w JOIN edges e ON w.y = e.a)
           SELECT x, y FROM w"""
    )
    assert job.job.max_iterations == 100
    edges = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("v", pa.int64())])
    src.add("edges", pa.table({"a": [1], "b": [2], "v": [1]}, schema=edges))
    assert job.refresh().refresh_id == 1
    manifest = (tmp_path / "ckpt" / "MANIFEST.json").read_bytes()
    src.add("edges", pa.table({"a": [2], "b": [1], "v": [2]}, schema=edges))  # a cycle
    started = time.perf_counter()
    with pytest.raises(RuntimeSqlError, match=r"recursive CTE 'w' did not converge within 100 iterations"):
        job.refresh()
    assert time.perf_counter() - started < 30
    assert job.refresh_id == 1
    assert (tmp_path / "ckpt" / "MANIFEST.json").read_bytes() == manifest
    assert sorted(tuple(r) for r in job.table("walks").collect()) == [(1, 2)]
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_recursive_union_view_warns_once_at_the_callers_line(spark: Any, tmp_path: Path) -> None:
    """Spark refuses UNION in a recursive CTE; a job registering one is warned from its
    own view() line, once, though each later view() compiles the program again."""
    import inspect
    import warnings

    from dbspc.compiler.errors import SparkExtension

    src = Sources(spark, tmp_path / "sources")
    src.create("edges", pa.schema([("a", pa.int32()), ("b", pa.int32()), ("v", pa.int64())]))
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False)
    job.append_table("edges", source=src.name("edges"), offset="v")
    reach = """CREATE VIEW reach AS WITH RECURSIVE r(x, y) AS (
                 SELECT a, b FROM edges UNION SELECT r.x, e.b FROM r JOIN edges e ON r.y = e.a)
               SELECT x, y FROM r"""
    with pytest.warns(SparkExtension, match="UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE") as said:
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        job.view(reach)
        job.view("CREATE VIEW n AS SELECT COUNT(*) AS n FROM edges")
    extensions = [w for w in said if issubclass(w.category, SparkExtension)]
    assert [(w.filename, w.lineno) for w in extensions] == [(__file__, line)]
    with warnings.catch_warnings(record=True) as later:
        warnings.simplefilter("always", SparkExtension)
        job.start()  # compiles the program again: nothing more to say
    assert not [w for w in later if issubclass(w.category, SparkExtension)]
    job.close()


def test_the_refresh_layer_imports_no_pyspark(tmp_path: Path) -> None:
    """runtime.refresh is engine-neutral: with pyspark unimportable, it imports and runs
    a refresh over the pyarrow engine."""
    import subprocess
    import sys

    code = f"""
import sys

class NoSpark:
    def find_spec(self, name, path=None, target=None):
        if name == "pyspark" or name.startswith("pyspark."):
            raise ImportError("pyspark is blocked")
        return None

sys.meta_path.insert(0, NoSpark())
from pathlib import Path
import dbspc.runtime.refresh.checkpoint, dbspc.runtime.refresh.engine, dbspc.runtime.refresh.failpoints
import dbspc.runtime.refresh.files, dbspc.runtime.refresh.job, dbspc.runtime.refresh.schema, dbspc.runtime.refresh.sinks
import dbspc.runtime.refresh.sources
from tests import spark_crash_child as child
work = Path({str(tmp_path)!r})
child.prepare_sources(work, 2)
job = child.file_job(work)
assert job.refresh().refresh_id == 1
assert not [m for m in sys.modules if m.startswith("pyspark")]
print("ok")
"""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env={"PYTHONPATH": str(root)}, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_array_views_are_spark_tables(spark: Any, tmp_path: Path) -> None:
    """A view with collect_list/collect_set columns is written as a Spark table with
    ARRAY columns, equal to Spark's own sort_array(collect_…) after each refresh."""
    name = f"arr{next(_names)}"
    spark.sql(f"CREATE TABLE {name}_t (g INT, x INT, s STRING) USING parquet LOCATION '{tmp_path / 't'}'")
    try:
        spark.sql(f"INSERT INTO {name}_t VALUES (1, 3, 'b'), (1, 1, NULL), (2, NULL, 'q'), (1, 3, 'b')")
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
        job.plain_table("t", source=f"{name}_t")
        query = "SELECT g, collect_list(x) AS xs, collect_set(s) AS ss FROM {t} GROUP BY g"
        job.view("CREATE VIEW lists AS " + query.format(t="t"))
        want_query = "SELECT g, sort_array(collect_list(x)) AS xs, sort_array(collect_set(s)) AS ss FROM {t} GROUP BY g"
        for change in ("", f"INSERT INTO {name}_t VALUES (2, 5, 'a'), (3, NULL, NULL)"):
            if change:
                spark.sql(change)
            job.refresh()
            got = spark.table(f"{name}_lists")
            assert dict(got.dtypes)["xs"] == "array<int>" and dict(got.dtypes)["ss"] == "array<string>"
            assert spark_rows(got) == spark_rows(spark.sql(want_query.format(t=f"{name}_t")))
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_t")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_outputs_on_a_hadoop_file_system(spark: Any, tmp_path: Path) -> None:
    """Outputs go through Hadoop's FileSystem, so any scheme Spark is configured for
    works: here viewfs://, a non-default scheme that needs no server, mounted on a local
    directory. The catalog tables, plain-file reads, readers and a restart all use it."""
    name = f"vfs{next(_names)}"
    lake = tmp_path / "lake"
    lake.mkdir()
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./lake", lake.as_uri())
    output = f"viewfs://{name}/lake/out"
    spark.sql(f"CREATE TABLE {name}_t (g INT, x INT) USING parquet LOCATION '{tmp_path / 't'}'")
    try:
        spark.sql(f"INSERT INTO {name}_t VALUES (1, 3), (1, 1), (2, 5)")
        want = f"SELECT g, SUM(x) AS total, COUNT(*) AS n FROM {name}_t GROUP BY g"

        def make() -> SparkPipeline:
            job = SparkPipeline(spark, tmp_path / "ckpt", output=output, view_prefix=f"{name}_", change_log=True)
            job.plain_table("t", source=f"{name}_t")
            return job.view("CREATE VIEW sums AS SELECT g, SUM(x) AS total, COUNT(*) AS n FROM t GROUP BY g")

        job = make()
        job.refresh()
        assert job.location("sums").startswith(f"viewfs://{name}/lake/out/sums/v")
        assert spark_rows(spark.table(f"{name}_sums")) == spark_rows(spark.sql(want))
        job.close()
        spark.sql(f"INSERT INTO {name}_t VALUES (2, 7), (3, 1)")
        job = make()  # a restart reads its outputs back through the same file system
        job.refresh()
        assert spark_rows(spark.table(f"{name}_sums")) == spark_rows(spark.sql(want))
        assert spark_rows(spark.read.parquet(job.location("sums"))) == spark_rows(spark.sql(want))
        assert spark_rows(read_view(spark, output, "sums")) == spark_rows(spark.sql(want))
        log = read_changes(spark, output, "sums")
        assert sorted(r[0] for r in log.select("_commit_version").distinct().collect()) == [1, 2]
        assert spark.table(f"{name}_sums_changes").count() == log.count()
        assert (lake / "out" / "_published.json").exists()  # it is where viewfs mounts it
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_t")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_change_data_feed_sources_as_they_come(spark: Any, tmp_path: Path) -> None:
    """A table shaped like Delta's change data feed is a source as it is: updates come
    as pre/post images, `_commit_timestamp` is metadata, not a column of the table; and
    a dbspc change log (the same shape) feeds a second job's views."""
    name = f"cdf{next(_names)}"
    spark.sql(
        f"CREATE TABLE {name}_feed (id INT, owner STRING, amount DECIMAL(10,2), _change_type STRING, "
        f"_commit_version BIGINT, _commit_timestamp TIMESTAMP) USING parquet LOCATION '{tmp_path / 'feed'}'"
    )
    try:
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_", change_log=True)
        job.change_feed("accounts", source=f"{name}_feed")
        job.view(
            "CREATE VIEW per_owner AS SELECT owner, SUM(amount) AS total, COUNT(*) AS n FROM accounts GROUP BY owner"
        )
        downstream = SparkPipeline(spark, tmp_path / "ckpt2", output=tmp_path / "out2", view_prefix=f"{name}_d_")
        downstream.change_feed("per_owner", source=f"{name}_per_owner_changes")
        with pytest.raises(
            UsageError,
            match=rf"Spark table '{name}_per_owner_changes' \(the source of table 'per_owner'\) does not exist",
        ):
            downstream.view("CREATE VIEW big AS SELECT owner FROM per_owner WHERE total > 10")
        commits = [
            "(1, 'ann', 5.00, 'insert', 1, now()), (2, 'bob', 7.50, 'insert', 1, now()), "
            "(3, 'ann', 6.00, 'insert', 1, now())",
            "(1, 'ann', 5.00, 'update_preimage', 2, now()), (1, 'bob', 5.00, 'update_postimage', 2, now()), "
            "(3, 'ann', 6.00, 'delete', 2, now())",
        ]
        want = [[("ann", Decimal("11.00"), 2), ("bob", Decimal("7.50"), 1)], [("bob", Decimal("12.50"), 2)]]
        for commit, rows in zip(commits, want, strict=True):
            spark.sql(f"INSERT INTO {name}_feed VALUES {commit}")
            job.refresh()
            assert spark_rows(spark.table(f"{name}_per_owner")) == [(r, 1) for r in rows]
            if not downstream._views:  # the upstream change log exists after its first refresh
                downstream.view("CREATE VIEW big AS SELECT owner FROM per_owner WHERE total > 10")
            downstream.refresh()
            assert spark_rows(spark.table(f"{name}_d_big")) == [((r[0],), 1) for r in rows if r[1] > 10]
        assert [c.name for c in job.pipeline.program.tables["accounts"].columns] == ["id", "owner", "amount"]
        job.close()
        downstream.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_feed")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_view_added_after_ten_refreshes_and_a_source_column_added(spark: Any, tmp_path: Path) -> None:
    """After 10 refreshes a view is added: at the restart it equals Spark's recompute at
    once, without reading the sources (no replay of their history). A column added to
    the source that no view reads is accepted."""
    name = f"evo{next(_names)}"
    feed = f"{name}_feed"
    spark.sql(
        f"CREATE TABLE {feed} (id INT, grp STRING, amount BIGINT, _change_type STRING, _commit_version BIGINT) "
        f"USING parquet LOCATION '{tmp_path / 'feed'}'"
    )
    rng = random.Random(3)
    live: dict[int, tuple[str, int]] = {}
    try:

        def make(views: list[str]) -> SparkPipeline:
            job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
            job.change_feed("items", source=feed)
            for v in views:
                job.view(v)
            return job

        first = ["CREATE VIEW sums AS SELECT grp, SUM(amount) AS total FROM items GROUP BY grp"]
        job = make(first)
        for version in range(1, 11):
            rows = []
            for _ in range(6):
                if live and rng.random() < 0.4:
                    key = rng.choice(sorted(live))
                    rows.append((key, *live.pop(key), "delete", version))
                else:
                    key = rng.randrange(1000)
                    if key not in live:
                        live[key] = (rng.choice("abc"), rng.randrange(100))
                        rows.append((key, *live[key], "insert", version))
            spark.createDataFrame(rows, spark.table(feed).schema).write.insertInto(feed)
            job.refresh()
        job.close()
        spark.sql(f"ALTER TABLE {feed} ADD COLUMNS (note STRING)")
        current = spark.createDataFrame([(k, g, a) for k, (g, a) in live.items()], "id INT, grp STRING, amount BIGINT")
        current.createOrReplaceTempView(f"{name}_now")
        added = "CREATE VIEW counts AS SELECT grp, COUNT(*) AS n, MAX(amount) AS top FROM items GROUP BY grp"
        job = make([*first, added])
        reads: list[Any] = []
        read_after = job._engine.read_after
        job._engine.read_after = lambda *a: reads.append(a) or read_after(*a)  # type: ignore[method-assign]
        assert job.refresh_id == 11 and reads == []  # the bootstrap reads no source: no replay
        want = spark.sql(f"SELECT grp, COUNT(*) AS n, MAX(amount) AS top FROM {name}_now GROUP BY grp")
        assert spark_rows(spark.table(f"{name}_counts")) == spark_rows(want)
        want = spark.sql(f"SELECT grp, SUM(amount) AS total FROM {name}_now GROUP BY grp")
        assert spark_rows(spark.table(f"{name}_sums")) == spark_rows(want)
        spark.sql(f"INSERT INTO {feed} VALUES (5000, 'a', 7, 'insert', 11, 'new column, unread')")
        job.refresh()
        want = spark.sql(
            f"SELECT grp, COUNT(*) AS n, MAX(amount) AS top FROM "
            f"(SELECT * FROM {name}_now UNION ALL SELECT 5000, 'a', 7) GROUP BY grp"
        )
        assert spark_rows(spark.table(f"{name}_counts")) == spark_rows(want)
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {feed}")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_every_refresh_is_observable(spark: Any, tmp_path: Path, caplog: Any, capsys: Any) -> None:
    """One log line per refresh, the same figures from metrics() and in the metrics
    table, and explain() prints the incremental circuit with its cost report."""
    name = f"obs{next(_names)}"
    spark.sql(f"CREATE TABLE {name}_t (g INT, x INT, v BIGINT) USING parquet LOCATION '{tmp_path / 't'}'")
    try:
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
        job.append_table("t", source=f"{name}_t", offset="v")
        job.view("CREATE VIEW s AS SELECT g, SUM(x) FROM t GROUP BY g")
        assert job.pipeline.view_columns("s") == ("g", "sum(x)")  # Spark's own name
        caplog.set_level(logging.INFO, logger="dbspc.refresh")
        for v in (1, 2):
            spark.sql(f"INSERT INTO {name}_t VALUES (1, {v}, {v}), (2, 5, {v})")
            job.refresh()
        lines = [r.getMessage() for r in caplog.records if r.name == "dbspc.refresh"]
        assert len(lines) == 2 and lines[1].startswith("refresh 2 committed: offsets t=2; rows in 2 (t 2); rows out")
        assert "state " in lines[1] and "compute " in lines[1] and "total " in lines[1]
        last = job.metrics()[-1]
        assert last["refresh_id"] == 2 and last["offsets"] == {"t": 2} and last["rows_in"] == 2
        assert last["state_rows"] > 0 and last["state_bytes"] > 0 and last["seconds"]["total"] > 0
        table = spark.table(f"{name}_dbspc_metrics").orderBy("refresh_id").collect()
        assert [r["refresh_id"] for r in table] == [1, 2] and table[1]["state_bytes"] == last["state_bytes"]
        job.explain()
        shown = capsys.readouterr().out
        assert "output[s]" in shown and "cost per change" in shown and "O(C log R)" in shown, shown
        job.close()
        blocker = tmp_path / "a_file"
        blocker.write_text("")
        broken = SparkPipeline(spark, blocker / "ckpt", output=tmp_path / "out2", publish=False)
        broken.append_table("t", source=f"{name}_t", offset="v").view("CREATE VIEW s AS SELECT g FROM t")
        with pytest.raises(UsageError, match=r"checkpoint directory .*a_file/ckpt cannot be written"):
            broken.refresh()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_t")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_view_named_like_a_catalog_table_is_refused_unless_replaced(spark: Any, tmp_path: Path) -> None:
    """A view whose table name is taken by a table the job did not create is refused at
    start, naming both; with replace=True the table is dropped and the view takes its
    name. CREATE OR REPLACE MATERIALIZED VIEW registers like CREATE VIEW."""
    name = f"own{next(_names)}"
    spark.sql(f"CREATE TABLE {name}_t (g INT, v BIGINT) USING parquet LOCATION '{tmp_path / 't'}'")
    spark.sql(f"CREATE TABLE {name}_counts (x STRING) USING parquet LOCATION '{tmp_path / 'theirs'}'")
    try:
        spark.sql(f"INSERT INTO {name}_t VALUES (1, 1), (1, 1), (2, 1)")

        def make(replace: bool) -> SparkPipeline:
            job = SparkPipeline(
                spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_", replace=replace
            )
            job.append_table("t", source=f"{name}_t", offset="v")
            return job.view("CREATE OR REPLACE MATERIALIZED VIEW counts AS SELECT g, COUNT(*) AS n FROM t GROUP BY g")

        job = make(replace=False)
        with pytest.raises(UsageError, match=rf"view 'counts' would be published as '{name}_counts', which is already"):
            job.refresh()
        assert spark.table(f"{name}_counts").columns == ["x"]  # untouched
        job = make(replace=True)
        job.refresh()
        assert spark_rows(spark.table(f"{name}_counts")) == [((1, 2), 1), ((2, 1), 1)]
        job.close()
        job = make(replace=False)  # its own table now: resuming is fine
        assert job.refresh_id == 1
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_t")
        spark.sql(f"DROP TABLE IF EXISTS {name}_counts")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_retention_clean_up_of_old_change_rows_is_not_an_error(spark: Any, tmp_path: Path, caplog: Any) -> None:
    """A change feed whose oldest rows are deleted after they were applied (retention)
    goes on, with a warning; a row missing above the oldest offset left still is an error."""
    src = Sources(spark, tmp_path / "sources")
    src.create("items", _ITEMS)
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False)
    job.change_table("items", source=src.name("items"), offset="version", weight="qty")
    job.view("CREATE VIEW ids AS SELECT id, COUNT(*) AS n FROM items GROUP BY id")
    files = []
    for version in (1, 2, 3, 4):
        files.append(src.add("items", _items([(version, 1, version), (10 + version, 1, version)])))
        job.refresh()
    caplog.set_level(logging.WARNING, logger="dbspc.refresh")
    files[0].unlink()  # versions 1 and 2 cleaned up
    files[1].unlink()
    src.add("items", _items([(5, 1, 5)]))
    assert job.refresh().refresh_id == 5
    assert any("cleaned up since (retention)" in r.getMessage() for r in caplog.records)
    assert sorted(r[0] for r in job.table("ids").collect()) == [1, 2, 3, 4, 5, 11, 12, 13, 14]
    files[3].unlink()  # version 4 gone while version 3 stays: not a clean-up of the oldest
    src.add("items", _items([(6, 1, 6)]))
    with pytest.raises(InputError, match=r"rows at offsets already committed"):
        job.refresh()
    job.close()


def test_committed_offsets_are_checked_by_the_files_added_not_every_row(tmp_path: Path) -> None:
    """Once a refresh has recorded the files it read, the next one checks for rows behind
    the committed offset only in the files added since (parquet files are never rewritten
    in place): no whole-table hash. A removed file (retention, a rewrite) brings the whole
    check back."""
    for i, batch in enumerate(child.batches(4, seed=3)):
        child.write_batch(tmp_path / "sources", i, batch)
    job = _file_job(tmp_path)
    whole: list[str] = []
    summary = job.engine.summary
    job.engine.summary = lambda source, *a, **k: whole.append(source) or summary(source, *a, **k)  # type: ignore
    job.refresh()
    for i, batch in enumerate(child.batches(7, seed=3)[4:], start=4):
        child.write_batch(tmp_path / "sources", i, batch)
        job.refresh()
    assert whole == [], whole
    manifest = json.loads((tmp_path / "checkpoint" / "MANIFEST.json").read_text())
    assert set(manifest["files"]) == {s.table.lower() for s in child.sources() if not isinstance(s, PlainTable)}
    Path(sorted(manifest["files"]["orders"])[5]).unlink()  # a later batch: not a retention clean-up
    with pytest.raises(InputError, match="rows at offsets already committed"):
        job.refresh()
    assert whole, "a removed file is checked against every committed row"
    job.close()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_table_partitioned_by_its_offset_is_checked_by_its_added_files(spark: Any, tmp_path: Path) -> None:
    """A change table partitioned by its offset column (the offset is in the directory
    names, not the files): the added files are read back with their partition column,
    so the whole-table hash is not needed; a late batch is still an error."""
    where = tmp_path / "items"
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", publish=False)

    def append(rows: list[tuple[int, int, int]]) -> None:
        df = spark.createDataFrame(rows, "id BIGINT, qty INT, version BIGINT")
        df.write.mode("append").partitionBy("version").parquet(str(where))
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW part_items USING parquet OPTIONS (path '{where}')")

    append([(1, 1, 1), (2, 1, 1)])
    job.change_table("items", source="part_items", offset="version", weight="qty")
    job.view("CREATE VIEW ids AS SELECT id, COUNT(*) AS n FROM items GROUP BY id")
    job.refresh()
    whole: list[str] = []
    summary = job.job.engine.summary
    job.job.engine.summary = lambda source, *a, **k: whole.append(source) or summary(source, *a, **k)  # type: ignore
    for version in (2, 3):
        append([(10 + version, 1, version)])
        job.refresh()
    assert whole == [] and job.refresh_id == 3
    append([(99, 1, 2)])  # behind: version 3 is committed
    with pytest.raises(InputError, match=r"rows at offsets already committed"):
        job.refresh()
    assert sorted(r[0] for r in job.table("ids").collect()) == [1, 2, 12, 13]
    job.close()

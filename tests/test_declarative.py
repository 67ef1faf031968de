"""Spark Declarative Pipelines projects maintained by dbspc (runtime/spark/declarative.py).

Fast tests read projects (spec, SQL files) without Spark. Spark tests refresh the
example project (examples/declarative, copied with its own database) several times,
with inserts, deletes and updates, and compare every materialized view's table with
Spark running the view's own SELECT on the same tables after every refresh.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from dbspc.compiler.errors import DbspcError, SqlError, UsageError
from dbspc.runtime.spark.declarative import DeclarativePipeline, load_project

pytest.importorskip("yaml")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "declarative"
spark_test = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
_names = itertools.count()


def project(root: Path, files: dict[str, str], spec: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    text = spec or "name: p\nstorage: store\nlibraries:\n  - glob:\n      include: transformations/**\n"
    (root / "spark-pipeline.yml").write_text(text)
    for name, body in files.items():
        (root / "transformations" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "transformations" / name).write_text(body)
    return root


# -- reading projects (no Spark) -------------------------------------------------------------


def test_example_views_in_dependency_order() -> None:
    loaded = load_project(EXAMPLE)
    assert loaded.spec.name == "shop" and loaded.spec.prefix == "shop."
    assert [v.name for v in loaded.views] == ["customer_revenue", "region_revenue", "big_customers"]
    assert loaded.views[0].reads == ("orders", "customers")
    assert sorted(loaded.sources()) == ["customers", "orders"]
    assert loaded.unsupported == []


def test_unsupported_statements_are_named(tmp_path: Path) -> None:
    sql = (
        "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM(src);\n"
        "CREATE FLOW backfill AS INSERT INTO raw BY NAME SELECT * FROM old;\n"
        "CREATE TEMPORARY VIEW t AS SELECT 1 AS x;\n"
        "SET spark.sql.ansi.enabled = true;\n"
        "  CREATE OR REFRESH MATERIALIZED VIEW m AS SELECT a FROM src;\n"
    )
    root = project(tmp_path / "p", {"a.sql": sql, "b.py": "print('python')\n"})
    loaded = load_project(root)
    found = [(u.kind, u.name, u.line) for u in loaded.unsupported]
    assert found == [
        ("streaming table", "raw", 1),
        ("flow", "backfill", 2),
        ("temporary view", "t", 3),
        ("statement", "SET SPARK", 4),
        ("Python file", "b.py", 1),
    ]
    # CREATE OR REFRESH is kept at its columns, with OR REFRESH blanked out
    assert loaded.views[0].text.startswith("  CREATE            MATERIALIZED VIEW m AS")
    with pytest.raises(UsageError) as raised:
        DeclarativePipeline(None, loaded, tmp_path / "ck")
    message = str(raised.value)
    for part in ("streaming table 'raw'", "flow 'backfill'", "temporary view 't'", "a.sql:2:1", "b.py"):
        assert part in message
    skipped = DeclarativePipeline(None, loaded, tmp_path / "ck", skip_unsupported=True)
    assert [u.name for u in skipped.unsupported][:2] == ["raw", "backfill"]


def test_spec_rules(tmp_path: Path) -> None:
    good = "name: p\nstorage: s\nschema: sales\ncatalog: main\n"
    assert load_project(project(tmp_path / "a", {}, good)).spec.prefix == "main.sales."
    for spec, error in [
        ("name: p\n", "missing required field 'storage'"),
        ("name: p\nstorage: s\ncolour: red\n", "unexpected field 'colour'"),
        ("name: p\nstorage: s\nlibraries:\n  - glob:\n      include: t/**/*.sql\n", "neither a file path"),
    ]:
        with pytest.raises(UsageError, match=error):
            load_project(project(tmp_path / f"b{next(_names)}", {}, spec))


def test_cycles_and_duplicates_are_positioned(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        {"x.sql": "CREATE MATERIALIZED VIEW a AS SELECT * FROM b;\n\nCREATE MATERIALIZED VIEW b AS SELECT * FROM a;"},
    )
    with pytest.raises(SqlError, match=r"x\.sql:\d:1: materialized views read each other in a cycle"):
        load_project(root)
    root = project(
        tmp_path / "q",
        {"x.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS v;", "y.sql": "\nCREATE MATERIALIZED VIEW a AS SELECT 2;"},
    )
    with pytest.raises(SqlError, match=r"y\.sql:2:1: materialized view 'a' is also defined at .*x\.sql:1:1"):
        load_project(root)


# -- maintained in Spark ---------------------------------------------------------------------

ORDERS = "id INT, customer_id INT, amount DECIMAL(10,2)"
CUSTOMERS = "id INT, name STRING, region STRING"


class Shop:
    """The example project in a database of its own, with its source tables."""

    def __init__(self, spark: Any, tmp: Path, orders_schema: str = ORDERS) -> None:
        self.spark = spark
        self.db = f"shop_test{next(_names)}"
        self.root = tmp / "project"
        shutil.copytree(EXAMPLE, self.root, ignore=shutil.ignore_patterns("*.py"))
        spec = self.root / "spark-pipeline.yml"
        spec.write_text(spec.read_text().replace("database: shop", f"database: {self.db}"))
        spark.sql(f"CREATE DATABASE {self.db} LOCATION '{tmp / 'db'}'")
        spark.sql(f"CREATE TABLE {self.db}.orders ({orders_schema}) USING parquet")
        spark.sql(f"CREATE TABLE {self.db}.customers ({CUSTOMERS}) USING parquet")

    def write(self, table: str, schema: str, rows: list[tuple[Any, ...]]) -> None:
        self.spark.createDataFrame(rows, schema).write.insertInto(f"{self.db}.{table}", overwrite=True)

    def check(self, job: DeclarativePipeline) -> None:
        """Every view's table equals Spark's recompute of its SELECT (views over views
        reading the recomputed ones, through temporary views of their names)."""
        self.spark.sql(f"USE {self.db}")
        try:
            for view in job.project.views:
                select = sqlglot.parse_one(view.text, read="spark").expression.sql(dialect="spark")
                expected = self.spark.sql(select)
                expected.createOrReplaceTempView(view.name)
                got = Counter(tuple(r) for r in self.spark.table(job.table_name(view.name)).collect())
                assert got == Counter(tuple(r) for r in expected.collect()), view.name
        finally:
            for view in job.project.views:
                self.spark.catalog.dropTempView(view.name)
            self.spark.sql("USE default")

    def drop(self) -> None:
        self.spark.sql(f"DROP DATABASE {self.db} CASCADE")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_example_refreshes_equal_recompute(spark: Any, tmp_path: Path) -> None:
    shop = Shop(spark, tmp_path)
    try:
        customers = [(1, "ada", "north"), (2, "bob", "south"), (3, "cy", "north")]
        orders = [(10, 1, Decimal("60.00")), (11, 1, Decimal("50.00")), (12, 2, Decimal("20.00"))]
        batches: list[tuple[list[int], list[tuple[Any, ...]], dict[int, str]]] = [
            ([], [], {}),  # the first refresh: the tables' initial contents
            ([11], [(13, 3, Decimal("200.00")), (14, 2, Decimal("5.50"))], {2: "north"}),  # delete, insert, update
            ([10, 12], [(15, 4, Decimal("1.00"))], {}),  # a customer without orders yet; orders of no one
            ([], [(16, 1, Decimal("99.99")), (17, 1, Decimal("0.02"))], {1: "south", 3: "east"}),
        ]
        job = DeclarativePipeline(spark, shop.root, tmp_path / "checkpoint", output=tmp_path / "out")
        for number, (deletes, inserts, moves) in enumerate(batches, start=1):
            orders = [o for o in orders if o[0] not in deletes] + inserts
            customers = [(i, n, moves.get(i, r)) for i, n, r in customers]
            if number == 3:
                customers.append((4, "dee", "west"))
            shop.write("orders", ORDERS, orders)
            shop.write("customers", CUSTOMERS, customers)
            result = job.refresh()
            assert result.refresh_id == number
            shop.check(job)
        job.close()
    finally:
        shop.drop()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("execution", ["driver", "distributed"])
def test_cli_refresh_in_the_active_session(spark: Any, tmp_path: Path, execution: str) -> None:
    """`dbspc pipelines refresh` inside a job (the session is active), with an append-only
    source given by its offset column and a plain one, in either execution mode."""
    from click.testing import CliRunner

    from dbspc.cli import main

    schema = ORDERS + ", batch BIGINT"
    shop = Shop(spark, tmp_path, schema)
    try:
        shop.write("customers", CUSTOMERS, [(1, "ada", "north"), (2, "bob", "south")])
        args = ["pipelines", "refresh", str(shop.root), "--checkpoint", str(tmp_path / "ck")]
        args += ["--output", str(tmp_path / "out"), "--append", "orders=batch", "--execution", execution]
        orders: list[tuple[Any, ...]] = []
        for batch in range(1, 3):
            orders += [(batch * 10 + i, 1 + i % 2, Decimal(f"{batch * 70 + i}.25"), batch) for i in range(3)]
            shop.write("orders", schema, orders)
            run = CliRunner().invoke(main, args)
            assert run.exit_code == 0, run.output
            assert f"refresh {batch} (committed)" in run.output
            assert f"{shop.db}.region_revenue:" in run.output
            shop.check(DeclarativePipeline(spark, shop.root, tmp_path / "unused"))
    finally:
        shop.drop()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_error_in_a_view_is_at_its_file_line_and_column(spark: Any, tmp_path: Path) -> None:
    shop = Shop(spark, tmp_path)
    try:
        bad = shop.root / "transformations" / "by_region.sql"
        text = bad.read_text().replace("SUM(orders) AS orders", "SUM(orderz) AS orders")
        bad.write_text(text)
        lines = text.splitlines()
        line = next(i for i, t in enumerate(lines, start=1) if "orderz" in t)
        col = lines[line - 1].index("orderz") + 1
        job = DeclarativePipeline(spark, shop.root, tmp_path / "checkpoint", output=tmp_path / "out")
        with pytest.raises(DbspcError) as raised:
            job.refresh()
        message = str(raised.value)
        assert f"by_region.sql:{line}:{col}: view 'region_revenue'" in message, message
        missing = shop.root / "transformations" / "extra.sql"
        missing.write_text("\n\n   CREATE MATERIALIZED VIEW extra AS SELECT * FROM nowhere;\n")
        job = DeclarativePipeline(spark, shop.root, tmp_path / "checkpoint2", output=tmp_path / "out2")
        with pytest.raises(UsageError, match=r"extra\.sql:3:4: materialized view 'extra' reads 'nowhere'"):
            job.refresh()
    finally:
        shop.drop()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_change_feed_standing_for_a_table(spark: Any, tmp_path: Path) -> None:
    """`orders` read through a Delta-style change feed of it (inserts, a delete, an
    update as pre- and post-image); Spark recomputes from the table itself."""
    from dbspc.runtime.refresh.sources import ChangeTable

    shop = Shop(spark, tmp_path)
    feed = f"{shop.db}.orders_cdf"
    spark.sql(f"CREATE TABLE {feed} ({ORDERS}, _change_type STRING, _commit_version BIGINT) USING parquet")
    try:
        shop.write("customers", CUSTOMERS, [(1, "ada", "north"), (2, "bob", "south")])
        a, b, c = (10, 1, Decimal("60.00")), (11, 2, Decimal("150.00")), (12, 1, Decimal("7.00"))
        commits: list[list[tuple[str, tuple[Any, ...]]]] = [
            [("insert", a), ("insert", b)],
            [("delete", a), ("insert", c), ("update_preimage", b), ("update_postimage", (11, 1, Decimal("1.50")))],
        ]
        orders: list[tuple[Any, ...]] = []
        job = DeclarativePipeline(
            spark,
            shop.root,
            tmp_path / "checkpoint",
            output=tmp_path / "out",
            sources={"orders": ChangeTable("orders", "_commit_version", op="_change_type", source=feed)},
        )
        for version, changes in enumerate(commits, start=1):
            for kind, row in changes:
                if kind in ("delete", "update_preimage"):
                    orders.remove(row)
                else:
                    orders.append(row)
            shop.write("orders", ORDERS, orders)
            rows = [(*row, kind, version) for kind, row in changes]
            spark.createDataFrame(rows, f"{ORDERS}, _change_type STRING, _commit_version BIGINT").write.insertInto(feed)
            result = job.refresh()
            assert result.rows_read["orders"] == len(changes)
            shop.check(job)
        job.close()
    finally:
        shop.drop()


def test_cli_refuses_before_starting_spark(tmp_path: Path) -> None:
    """Definitions dbspc does not maintain, or a cycle, are reported by the command with
    their places (a cycle with its line and a caret) before any Spark session starts."""
    from click.testing import CliRunner

    from dbspc.cli import main

    sql = "-- two views\nCREATE MATERIALIZED VIEW a AS SELECT * FROM b;\n"
    sql += "  CREATE MATERIALIZED VIEW b AS SELECT * FROM a;\n"
    root = project(tmp_path / "p", {"x.sql": sql})
    run = CliRunner().invoke(main, ["pipelines", "refresh", str(root)])
    assert run.exit_code == 1
    assert "x.sql:2:1: error: materialized views read each other in a cycle: a -> b -> a" in run.output
    assert " 2 | CREATE MATERIALIZED VIEW a" in run.output
    (root / "transformations" / "x.sql").write_text("CREATE FLOW f AS INSERT INTO t BY NAME SELECT 1;\n")
    run = CliRunner().invoke(main, ["pipelines", "refresh", str(root)])
    assert run.exit_code == 1 and "x.sql:1:1: flow 'f'" in run.output, run.output

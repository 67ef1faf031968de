"""The distributed mode on a real multi-process cluster: `local-cluster[2,1,1024]`, a
master, two workers and two executor JVMs started by the test (about 50 s).

After every refresh each view's integrated deltas equal Spark SQL's recomputation of
the view on the same cluster, and each delta equals the driver's Pipeline's: a join
under a GROUP BY (MIN/MAX with retractions), DISTINCT, EXCEPT, a recursive view, under
random inserts, deletes and updates. Also: one key holding 30% of the rows (skew), and
an executor JVM killed with -9 in the middle of a refresh, and a SparkPipeline with
execution="distributed" over change tables.

Run with `pytest -m cluster` (its own process: one SparkContext per process).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dbspc.runtime.distributed.spark_stages import SparkStages
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.spark import SparkPipeline
from dbspc.runtime.zset import ZSet

pytestmark = pytest.mark.cluster

Row = tuple[Any, ...]
TABLES = """
CREATE TABLE customers (id INT, region STRING);
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE TABLE edges (src INT, dst INT);
"""
VIEWS = {
    "revenue": """SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total, MIN(o.amount) AS low,
                  MAX(o.amount) AS top FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region""",
    "regions": "SELECT DISTINCT region FROM customers",
    "idle": "SELECT id FROM customers EXCEPT SELECT customer_id FROM orders",
    # every path of a DAG (Spark allows UNION ALL only in a recursive CTE)
    "paths": """WITH RECURSIVE r(src, dst) AS (SELECT src, dst FROM edges
                UNION ALL SELECT r.src, e.dst FROM r JOIN edges e ON r.dst = e.src) SELECT src, dst FROM r""",
}
PROGRAM = TABLES + "".join(f"CREATE VIEW {name} AS {sql};\n" for name, sql in VIEWS.items())


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("dbspc-cluster-tests")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.executor.memory", "768m")
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


class Tables:
    """The tables' contents, changed at random: inserts, deletes and updates."""

    def __init__(self, seed: int, hot: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.hot = hot  # share of new orders for customer 0
        self.rows: dict[str, dict[Any, Row]] = {"customers": {}, "orders": {}, "edges": {}}
        self.next_id = 0

    def change(self, orders: int) -> dict[str, list[tuple[Row, int]]]:
        rng, step = self.rng, {"customers": [], "orders": [], "edges": []}
        present = self.rows["orders"]
        for key in rng.sample(sorted(present), min(orders // 5, len(present))):
            row = present.pop(key)
            step["orders"].append((row, -1))
            if rng.random() < 0.5:  # an update: the same order, a new amount
                present[key] = (row[0], row[1], Decimal(rng.randrange(100_000)) / 100)
                step["orders"].append((present[key], 1))
        for _ in range(orders):
            self.next_id += 1
            customer = 0 if rng.random() < self.hot else rng.randrange(40)
            present[self.next_id] = (self.next_id, customer, Decimal(rng.randrange(100_000)) / 100)
            step["orders"].append((present[self.next_id], 1))
        for cid in rng.sample(range(45), 6):
            if cid in self.rows["customers"]:
                step["customers"].append((self.rows["customers"].pop(cid), -1))
            if rng.random() < 0.8:
                self.rows["customers"][cid] = (cid, rng.choice(["north", "south", "east", "west", None]))
                step["customers"].append((self.rows["customers"][cid], 1))
        for _ in range(4):
            a, b = rng.sample(range(12), 2)
            edge = (min(a, b), max(a, b))  # acyclic
            if edge in self.rows["edges"]:
                step["edges"].append((self.rows["edges"].pop(edge), -1))
            else:
                self.rows["edges"][edge] = edge
                step["edges"].append((edge, 1))
        return step


def frame(spark: Any, p: Pipeline, table: str, rows: list[tuple[Row, int]] | list[Row], weighted: bool = True) -> Any:
    cols = [f"`{c}` {t.sql()}" for c, t in zip(p.table_columns(table), p.table_types(table), strict=True)]
    if weighted:
        return spark.createDataFrame([(*r, w) for r, w in rows], ", ".join([*cols, "_weight BIGINT"]))
    return spark.createDataFrame(rows, ", ".join(cols))


def refresh_and_check(spark: Any, driver: Pipeline, stages: SparkStages, tables: Tables,
                      integrated: dict[str, Counter[Row]], orders: int, during: Any = None) -> tuple[float, Any]:
    step = tables.change(orders)
    changes = {t: frame(spark, driver, t, ch) for t, ch in step.items() if ch}
    started = time.perf_counter()
    if during is not None:
        threading.Timer(1.0, during).start()
    result = stages.refresh(changes)
    elapsed = time.perf_counter() - started
    want = driver.step(
        {t: ZSet.from_rows([r for r, _ in ch], driver.table_types(t), [w for _, w in ch]) for t, ch in step.items()}
    )
    for view, df in result.deltas.items():
        got = sorted((tuple(r) for r in df.collect()), key=repr)
        assert got == sorted(((*r, w) for r, w in want[view].to_rows()), key=repr), f"refresh {result.refresh}: {view}"
        for *row, w in got:
            integrated[view][tuple(row)] += w
    for t, rows in tables.rows.items():
        frame(spark, driver, t, list(rows.values()), weighted=False).createOrReplaceTempView(t)
    for view, sql in VIEWS.items():
        recomputed = Counter(tuple(r) for r in spark.sql(sql).collect())
        assert +integrated[view] == recomputed, f"refresh {result.refresh}: {view} against Spark SQL"
    return elapsed, result


def test_refreshes_on_two_executors_equal_spark_sql_and_the_driver(cluster: Any, tmp_path: Path) -> None:
    driver = Pipeline.from_sql(PROGRAM)
    columns = {v: driver.view_columns(v) for v in driver.view_names()}
    stages = SparkStages(cluster, driver.circuit, tmp_path / "state", buckets=4, columns=columns)
    tables, integrated = Tables(seed=3), {v: Counter[Row]() for v in VIEWS}
    for _ in range(4):
        _, result = refresh_and_check(cluster, driver, stages, tables, integrated, orders=60)
        # Each slot runs in the same worker every refresh: from the second refresh on,
        # every bucket's task finds its state in memory (slots.py).
        missed = [(m["stage"], m["bucket"]) for m in result.metrics() if m["state_read_bytes"]]
        assert not missed, f"refresh {result.refresh}: buckets read from storage: {missed}"
    assert len(set(stages.slots().placement)) == 2, stages.slots().placement


def test_one_key_with_30_percent_of_the_rows(cluster: Any, tmp_path: Path) -> None:
    driver = Pipeline.from_sql(PROGRAM)
    stages = SparkStages(cluster, driver.circuit, tmp_path / "state", buckets=4)
    tables, integrated = Tables(seed=5, hot=0.3), {v: Counter[Row]() for v in VIEWS}
    times = [refresh_and_check(cluster, driver, stages, tables, integrated, orders=2_000)[0] for _ in range(3)]
    hot = Counter(r[1] for r in tables.rows["orders"].values())
    assert hot[0] / sum(hot.values()) > 0.25
    print(f"skewed refreshes: {', '.join(f'{t:.1f} s' for t in times)}")


def _kill_one_executor() -> None:
    pids = subprocess.run(["pgrep", "-f", "CoarseGrainedExecutorBackend"], capture_output=True, text=True).stdout
    if pids.split():
        os.kill(int(pids.split()[0]), signal.SIGKILL)


def test_an_executor_killed_mid_refresh_changes_no_result(cluster: Any, tmp_path: Path) -> None:
    """Spark reruns the lost slot's task on the other executor (or on the executor the
    worker starts again); a rerun task starts from the committed state on storage."""
    driver = Pipeline.from_sql(PROGRAM)
    stages = SparkStages(cluster, driver.circuit, tmp_path / "state", buckets=4)
    tables, integrated = Tables(seed=11), {v: Counter[Row]() for v in VIEWS}
    refresh_and_check(cluster, driver, stages, tables, integrated, orders=200)
    refresh_and_check(cluster, driver, stages, tables, integrated, orders=200, during=_kill_one_executor)
    refresh_and_check(cluster, driver, stages, tables, integrated, orders=200)


_SCHEMAS = {
    "customers": pa.schema([("id", pa.int32()), ("region", pa.string())]),
    "orders": pa.schema([("id", pa.int64()), ("customer_id", pa.int32()), ("amount", pa.decimal128(10, 2))]),
    "edges": pa.schema([("src", pa.int32()), ("dst", pa.int32())]),
}


def test_a_spark_pipeline_runs_distributed(cluster: Any, tmp_path: Path) -> None:
    """SparkPipeline(execution="distributed") over change tables that an outside writer
    appends parquet batches to: after every refresh each view's table equals Spark
    SQL's recompute on the cluster, and an executor killed during a refresh changes
    nothing."""
    job = SparkPipeline(
        cluster, tmp_path / "ckpt", output=tmp_path / "out", execution="distributed", buckets=4, publish=False
    )
    for table, schema in _SCHEMAS.items():
        where = tmp_path / "sources" / table
        where.mkdir(parents=True)
        with_meta = schema.append(pa.field("op", pa.string())).append(pa.field("v", pa.int64()))
        pq.write_table(with_meta.empty_table(), where / "empty.parquet")
        cluster.sql(f"CREATE OR REPLACE TEMPORARY VIEW src_{table} USING parquet OPTIONS (path '{where}')")
        job.change_table(table, source=f"src_{table}", offset="v", op="op")
    for name, sql in VIEWS.items():
        job.view(f"CREATE VIEW {name} AS {sql}")
    tables = Tables(seed=13)
    p = Pipeline.from_sql(PROGRAM)
    for k in range(1, 5):
        for table, changes in tables.change(150).items():
            columns = list(zip(*[(*r, "insert" if w > 0 else "delete", k) for r, w in changes], strict=True))
            schema = _SCHEMAS[table].append(pa.field("op", pa.string())).append(pa.field("v", pa.int64()))
            if changes:
                batch = pa.table([pa.array(c, f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)
                pq.write_table(batch, tmp_path / "sources" / table / f"batch{k}.parquet")
        if k == 3:
            threading.Timer(1.0, _kill_one_executor).start()
        assert job.refresh().refresh_id == k
        for t, rows in tables.rows.items():
            frame(cluster, p, t, list(rows.values()), weighted=False).createOrReplaceTempView(t)
        for view, sql in VIEWS.items():
            got = Counter(tuple(r) for r in job.table(view).collect())
            assert got == Counter(tuple(r) for r in cluster.sql(sql).collect()), f"refresh {k}: {view}"
    job.close()

"""A PySpark job maintaining two views incrementally with dbspc (run by `make demo`).

Local Spark, with its warehouse in .dbspc-demo/ (recreated on every run). The job:
  - creates three Spark tables: `orders_changes` (a change table: an op column and a
    version offset), `customers` (append-only, with a batch offset) and `edges` (a plain
    table of package dependencies, no change information: diffed by snapshot);
  - registers a join + aggregate view and a recursive view (transitive dependencies);
  - applies several change batches, refreshing after each, and prints each view's
    delta with the time of the refresh next to the time Spark takes to recompute the
    same view from the same tables;
  - shows a bad batch (deleting an order that does not exist) being rejected without
    touching anything, and the next refresh working once a fix arrives;
  - restarts from the checkpoint, and reads the views back as catalog tables, from a
    new Spark session and as plain parquet files;
  - adds a view to the running pipeline: it is bootstrapped from the checkpoint at the
    restart, with no replay of the sources' history;
  - logs one line per refresh (the `dbspc.refresh` logger) and keeps a metrics table.

    .venv/bin/python examples/spark_demo.py
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dbspc.compiler.errors import DbspcError
from dbspc.runtime.spark import SparkPipeline, local_session
from dbspc.runtime.zset import ZSet

HOME = Path(__file__).resolve().parent.parent / ".dbspc-demo"

REVENUE = """CREATE VIEW revenue_by_region AS
SELECT c.region, COUNT(*) AS orders, SUM(o.amount) AS revenue
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region"""

REACH = """CREATE VIEW reach AS
WITH RECURSIVE r(x, y) AS (
  SELECT src, dst FROM edges
  UNION
  SELECT e.src, r.y FROM edges e JOIN r ON e.dst = r.x)
SELECT x, y FROM r"""

# What Spark runs to recompute each view from the same tables. Spark reads the change
# table's current contents by summing its operations, and its recursive CTEs allow only
# UNION ALL (fine here: the dependency graph has no cycle), hence SELECT DISTINCT.
SPARK_REVENUE = """WITH orders AS (
  SELECT id, customer_id, amount FROM orders_changes
  GROUP BY id, customer_id, amount
  HAVING SUM(CASE WHEN op = 'delete' THEN -1 ELSE 1 END) > 0)
SELECT c.region, COUNT(*) AS orders, SUM(o.amount) AS revenue
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region"""

SPARK_REACH = """WITH RECURSIVE r(x, y) AS (
  SELECT src, dst FROM edges
  UNION ALL
  SELECT e.src, r.y FROM edges e JOIN r ON e.dst = r.x)
SELECT DISTINCT x, y FROM r"""

ORDERS_SCHEMA = "id BIGINT, customer_id INT, amount DECIMAL(10,2), op STRING, version BIGINT"
CUSTOMERS_SCHEMA = "id INT, name STRING, region STRING, batch INT"
EDGES_SCHEMA = "src STRING, dst STRING"


def orders(version: int, *rows: tuple[int, int, str, str]) -> list[tuple[Any, ...]]:
    return [(i, c, Decimal(a), op, version) for i, c, a, op in rows]


BATCHES: list[tuple[str, dict[str, list[tuple[Any, ...]]]]] = [
    (
        "initial load",
        {
            "customers": [(1, "ana", "eu", 0), (2, "bo", "us", 0), (3, "chen", "apac", 0), (4, "dee", "eu", 0)],
            "orders_changes": orders(
                1,
                (100, 1, "20.00", "insert"),
                (101, 2, "35.50", "insert"),
                (102, 3, "12.25", "insert"),
                (103, 4, "8.00", "insert"),
                (104, 1, "99.90", "insert"),
            ),
            "edges": [("app", "web"), ("web", "http"), ("http", "socket"), ("app", "db"), ("db", "socket")],
        },
    ),
    (
        "two new orders, one cancelled, a new customer",
        {
            "customers": [(5, "eli", "us", 1)],
            "orders_changes": orders(
                2, (105, 5, "42.00", "insert"), (106, 2, "5.00", "insert"), (103, 4, "8.00", "delete")
            ),
            "edges": [
                ("app", "web"),
                ("web", "http"),
                ("http", "socket"),
                ("app", "db"),
                ("db", "socket"),
                ("socket", "libc"),
            ],
        },
    ),
    (
        "an order's amount corrected (an update: delete + insert); app stops using db",
        {
            "orders_changes": orders(3, (104, 1, "99.90", "update_preimage"), (104, 1, "89.90", "update_postimage")),
            "edges": [("app", "web"), ("web", "http"), ("http", "socket"), ("db", "socket"), ("socket", "libc")],
        },
    ),
]

BAD = ("a bad batch: deletes order 999, which does not exist", orders(4, (999, 1, "1.00", "delete")))
FIX = ("the fix: the missing order is inserted, so the delete applies", orders(5, (999, 1, "1.00", "insert")))


def insert(spark: Any, table: str, schema: str, rows: list[tuple[Any, ...]], overwrite: bool = False) -> None:
    if rows or overwrite:
        spark.createDataFrame(rows, schema).write.insertInto(table, overwrite=overwrite)


def show(value: Any) -> str:
    return "NULL" if value is None else str(value)


def print_delta(view: str, delta: ZSet) -> None:
    rows = delta.to_rows()
    print(f"  {view}:" + ("" if rows else " no change"))
    for row, weight in sorted(rows, key=lambda rw: rw[1]):
        print(f"    {'+' if weight > 0 else '-'}{abs(weight)}  {' | '.join(show(v) for v in row)}")


def spark_time(spark: Any, query: str, target: Path) -> float:
    started = time.perf_counter()
    spark.sql(query).write.mode("overwrite").parquet(str(target))
    return time.perf_counter() - started


def main() -> None:
    logging.basicConfig(format="  [dbspc log] %(message)s")
    logging.getLogger("dbspc.refresh").setLevel(logging.INFO)
    shutil.rmtree(HOME, ignore_errors=True)
    print(f"starting local Spark (warehouse in {HOME}) ...", flush=True)
    spark = local_session(app="dbspc-demo", warehouse=HOME / "warehouse")
    spark.sql(f"CREATE TABLE orders_changes ({ORDERS_SCHEMA}) USING parquet")
    spark.sql(f"CREATE TABLE customers ({CUSTOMERS_SCHEMA}) USING parquet")
    spark.sql(f"CREATE TABLE edges ({EDGES_SCHEMA}) USING parquet")

    def pipeline(*more: str) -> SparkPipeline:
        job = SparkPipeline(spark, HOME / "checkpoint", change_log=True)
        job.change_table("orders", source="orders_changes", offset="version", op="op")
        job.append_table("customers", offset="batch")
        job.plain_table("edges")
        job.view(REVENUE).view(REACH)
        for view in more:
            job.view(view)
        return job

    job = pipeline()
    print("\nthe program dbspc compiles (CREATE TABLE generated from the Spark catalog):\n")
    print(job.program_text)

    def refresh(title: str) -> None:
        result = job.refresh()
        print(f"refresh {result.refresh_id}: {title}")
        for view, delta in result.deltas.items():
            print_delta(view, delta)
        t = result.timings
        phases = ", ".join(f"{k} {t[k]:.2f}" for k in ("transfer", "compute", "write_back", "checkpoint"))
        revenue = spark_time(spark, SPARK_REVENUE, HOME / "recompute" / "revenue")
        reach = spark_time(spark, SPARK_REACH, HOME / "recompute" / "reach")
        print(
            f"  time: dbspc refresh {t['total']:.2f} s ({phases}) | "
            f"Spark recompute: revenue_by_region {revenue:.2f} s, reach {reach:.2f} s\n",
            flush=True,
        )

    for title, batch in BATCHES:
        insert(spark, "customers", CUSTOMERS_SCHEMA, batch.get("customers", []))
        insert(spark, "orders_changes", ORDERS_SCHEMA, batch.get("orders_changes", []))
        if "edges" in batch:
            insert(spark, "edges", EDGES_SCHEMA, batch["edges"], overwrite=True)
        refresh(title)

    title, rows = BAD
    insert(spark, "orders_changes", ORDERS_SCHEMA, rows)
    try:
        job.refresh()
    except DbspcError as e:
        print(f"{title}:\n  rejected: {e}\n  (nothing was written; refresh id is still {job.refresh_id})\n")
    title, rows = FIX
    insert(spark, "orders_changes", ORDERS_SCHEMA, rows)
    refresh(title)

    job.close()
    job = pipeline()
    print(f"restarted from the checkpoint at refresh {job.refresh_id}; a refresh with no new changes:")
    print(f"  committed: {job.refresh().committed}\n")
    print("the views are catalog tables: here read from a new Spark session (spark.newSession().table(...)):")
    other = spark.newSession()
    other.table("revenue_by_region").orderBy("region").show()
    other.sql("SELECT x, collect_list(y) AS reaches FROM (SELECT * FROM reach ORDER BY y) GROUP BY x ORDER BY x").show(
        truncate=False
    )
    location = job.location("revenue_by_region")
    print(f"and as plain parquet files any engine reads: spark.read.parquet('{location}')")
    spark.read.parquet(location).orderBy("region").show()
    print("the change data feed of revenue_by_region (spark.table('revenue_by_region_changes')):")
    spark.table("revenue_by_region_changes").orderBy("_commit_version", "_change_type", "region").drop(
        "_commit_timestamp"
    ).show()
    job.close()

    added = (
        "CREATE VIEW spend_per_customer AS SELECT c.name, SUM(o.amount) "
        "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.name"
    )
    job = pipeline(added)
    print("a view added to the pipeline: at the restart it is bootstrapped from the checkpoint (refresh")
    print(f"{job.refresh_id}), without reading the sources again; its unaliased sum is named as Spark names it:")
    spark.table("spend_per_customer").orderBy("name").show()
    print("the metrics table (spark.table('dbspc_metrics')), one row per refresh:")
    spark.table("dbspc_metrics").select(
        "refresh_id", "rows_in", "rows_out", "state_rows", "state_bytes", "total_seconds"
    ).orderBy("refresh_id").show()
    print(
        "On tables this small both sides are mostly Spark's per-job latency (a refresh runs one small Spark job\n"
        "per source; the plain table `edges` costs a snapshot write and a diff). The gap opens with data size:\n"
        "bench/spark_refresh.py refreshes 1,000 changes on a 1M-row table against Spark recomputing the views."
    )
    job.close()
    spark.stop()


if __name__ == "__main__":
    main()

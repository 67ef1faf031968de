"""The SDP project beside this file, its materialized views maintained by dbspc.

    .venv/bin/python examples/declarative/run_example.py

Local Spark with its warehouse in .dbspc-declarative/ (recreated on every run):
  1. creates the source tables shop.orders and shop.customers;
  2. one `dbspc` refresh of the project (what `dbspc pipelines refresh` does);
  3. changes the sources (inserts, a delete, an update) and refreshes again;
  4. after each refresh, checks every view's table (shop.<view>) against Spark running
     the view's own SELECT on the same tables, as `spark-pipelines run` would.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

import sqlglot

from dbspc.runtime.spark import local_session
from dbspc.runtime.spark.declarative import DeclarativePipeline

PROJECT = Path(__file__).resolve().parent
HOME = PROJECT.parent.parent / ".dbspc-declarative"

ORDERS = "id INT, customer_id INT, amount DECIMAL(10,2)"
CUSTOMERS = "id INT, name STRING, region STRING"


def write(spark: Any, table: str, schema: str, rows: list[tuple[Any, ...]]) -> None:
    """Replace a source table's contents (a plain table: dbspc diffs its snapshots)."""
    spark.createDataFrame(rows, schema).write.insertInto(table, overwrite=True)


def recompute(spark: Any, job: DeclarativePipeline) -> dict[str, Counter[tuple[Any, ...]]]:
    """Each view's SELECT run by Spark, in dependency order: each result is a temporary
    view of the view's name, so a view over a view reads the recomputed one."""
    spark.sql("USE shop")
    found = {}
    for view in job.project.views:
        select = sqlglot.parse_one(view.text, read="spark").expression.sql(dialect="spark")
        frame = spark.sql(select)
        frame.createOrReplaceTempView(view.name)
        found[view.name] = Counter(tuple(r) for r in frame.collect())
    for view in job.project.views:
        spark.catalog.dropTempView(view.name)
    spark.sql("USE default")
    return found


def check(spark: Any, job: DeclarativePipeline) -> None:
    expected = recompute(spark, job)
    for view in job.project.views:
        table = job.table_name(view.name)
        got = Counter(tuple(r) for r in spark.table(table).collect())
        status = "equals Spark's recompute" if got == expected[view.name] else "DIFFERS from Spark's recompute"
        print(f"  {table}: {sum(got.values())} rows, {status}")
        if got != expected[view.name]:
            spark_rows = sorted(expected[view.name].elements())
            raise SystemExit(f"{table}: dbspc {sorted(got.elements())} != Spark {spark_rows}")


def main() -> None:
    shutil.rmtree(HOME, ignore_errors=True)
    spark = local_session("dbspc-declarative", warehouse=HOME / "warehouse")
    spark.sql("CREATE DATABASE shop")
    spark.sql(f"CREATE TABLE shop.orders ({ORDERS}) USING parquet")
    spark.sql(f"CREATE TABLE shop.customers ({CUSTOMERS}) USING parquet")
    customers = [(1, "ada", "north"), (2, "bob", "south"), (3, "cy", "north")]
    orders = [(10, 1, Decimal("60.00")), (11, 1, Decimal("50.00")), (12, 2, Decimal("20.00"))]
    write(spark, "shop.customers", CUSTOMERS, customers)
    write(spark, "shop.orders", ORDERS, orders)

    job = DeclarativePipeline(spark, PROJECT, HOME / "checkpoint")
    print(f"views of pipeline '{job.project.spec.name}', in dependency order:")
    for view in job.project.views:
        print(f"  {view.name} ({view.where}) reads {', '.join(view.reads)}")
    result = job.refresh()
    print(f"refresh {result.refresh_id}: rows read {result.rows_read}")
    check(spark, job)

    orders = [o for o in orders if o[0] != 11]  # a delete
    orders += [(13, 3, Decimal("200.00")), (14, 2, Decimal("5.50"))]  # inserts
    customers = [(2, "bob", "north") if c[0] == 2 else c for c in customers]  # an update
    write(spark, "shop.orders", ORDERS, orders)
    write(spark, "shop.customers", CUSTOMERS, customers)
    result = job.refresh()
    print(f"refresh {result.refresh_id}: rows read {result.rows_read}")
    for view, delta in sorted(result.deltas.items()):
        print(f"  {view} changed by {len(delta)} row(s)")
    check(spark, job)
    spark.table("shop.region_revenue").orderBy("region").show()
    job.close()
    spark.stop()


if __name__ == "__main__":
    main()

"""A driver process for the distributed mode's kill -9 test (test_distributed_spark.py).

    python tests/distributed_driver.py STATE STEPS OUT

Applies the change steps of STEPS (JSON: per step, per table, [row, weight] pairs) that
come after the committed refresh of STATE, one refresh each, on its own local Spark
session, and writes each refresh's deltas to OUT/deltas-<k>.json. Prints
`refreshing <k>` before each refresh so the test can kill it in the middle of one.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

from dbspc.runtime.distributed.spark_stages import SparkStages
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.spark.session import local_session

PROGRAM = """
CREATE TABLE customers (id INT, region STRING);
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE VIEW revenue AS
  SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total, MAX(o.amount) AS top
  FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region;
CREATE VIEW regions AS SELECT DISTINCT region FROM customers;
CREATE VIEW per_customer AS SELECT customer_id, SUM(id) AS ids FROM orders GROUP BY customer_id;
"""


def rows_of(table: str, changes: list[list[object]]) -> list[tuple[object, ...]]:
    if table == "orders":
        return [(r[0], r[1], Decimal(str(r[2])), w) for r, w in changes]  # type: ignore[index]
    return [(*r, w) for r, w in changes]  # type: ignore[misc]


def main() -> None:
    state, steps_file, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    steps = json.loads(steps_file.read_text())
    spark = local_session("dbspc-kill-test")
    p = Pipeline.from_sql(PROGRAM)
    stages = SparkStages(spark, p.circuit, state, buckets=3)
    for k in range(stages.committed + 1, len(steps) + 1):
        frames = {}
        for table, changes in steps[k - 1].items():
            cols = [f"`{c}` {t.sql()}" for c, t in zip(p.table_columns(table), p.table_types(table), strict=True)]
            frames[table] = spark.createDataFrame(rows_of(table, changes), ", ".join([*cols, "_weight BIGINT"]))
        print(f"refreshing {k}", flush=True)
        result = stages.refresh(frames)
        deltas = {v: sorted(([str(x) for x in r] for r in df.collect()), key=repr) for v, df in result.deltas.items()}
        (out / f"deltas-{k}.json").write_text(json.dumps(deltas))
        print(f"committed {k}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()

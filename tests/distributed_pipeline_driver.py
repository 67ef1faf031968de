"""A driver process for the distributed SparkPipeline's kill -9 test
(test_distributed_spark.py).

    python tests/distributed_pipeline_driver.py WORK STEPS

Writes the change batches of STEPS (JSON: per step, per table, [row, weight] pairs) as
parquet files of change tables under WORK/sources, batch k at offset k, and refreshes a
SparkPipeline with execution="distributed" (checkpoint WORK/ckpt, output WORK/out) once
per batch after its committed refresh. Prints `refreshing <k>` before each refresh so
the test can kill it in the middle of one.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from dbspc.runtime.spark import SparkPipeline
from dbspc.runtime.spark.session import local_session

SCHEMAS = {
    "customers": pa.schema([("id", pa.int32()), ("region", pa.string())]),
    "orders": pa.schema([("id", pa.int64()), ("customer_id", pa.int32()), ("amount", pa.decimal128(10, 2))]),
}
META = [pa.field("op", pa.string()), pa.field("v", pa.int64())]
VIEWS = [
    """CREATE VIEW revenue AS SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total, MAX(o.amount) AS top
       FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region""",
    "CREATE VIEW regions AS SELECT DISTINCT region FROM customers",
    "CREATE VIEW per_customer AS SELECT customer_id, SUM(id) AS ids FROM orders GROUP BY customer_id",
]


def write_batch(where: Path, table: str, k: int, changes: list[list[object]]) -> None:
    schema = pa.schema([*SCHEMAS[table], *META])
    rows = [
        (*(Decimal(v) if f.type == pa.decimal128(10, 2) else v for v, f in zip(r, SCHEMAS[table], strict=True)),
         "insert" if w > 0 else "delete", k)
        for r, w in changes  # type: ignore[misc]
    ]
    columns = [pa.array([r[i] for r in rows], f.type) for i, f in enumerate(schema)]
    pq.write_table(pa.Table.from_arrays(columns, schema=schema), where / table / f"b{k:04d}.parquet")


def main() -> None:
    work, steps = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    spark = local_session("dbspc-pipeline-kill-test")
    job = SparkPipeline(
        spark, work / "ckpt", output=work / "out", execution="distributed", buckets=3, change_log=True, publish=False
    )
    for table, schema in SCHEMAS.items():
        (work / "sources" / table).mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.schema([*schema, *META]).empty_table(), work / "sources" / table / "empty.parquet")
        path = work / "sources" / table
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW src_{table} USING parquet OPTIONS (path '{path}')")
        job.change_table(table, source=f"src_{table}", offset="v", op="op")
    for view in VIEWS:
        job.view(view)
    for k in range(job.refresh_id + 1, len(steps) + 1):
        for table, changes in steps[k - 1].items():
            write_batch(work / "sources", table, k, changes)  # the same file again after a crash
        print(f"refreshing {k}", flush=True)
        job.refresh()
        print(f"committed {k}", flush=True)
    job.close()
    spark.stop()


if __name__ == "__main__":
    main()

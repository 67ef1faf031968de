"""Distributed mode against Spark SQL's recompute, on a multi-process cluster, in one run (issue 12).

    .venv/bin/python bench/spark_scale.py --orders 10000000 50000000 --change 10000 --refreshes 3

The view (a join under a GROUP BY):

    SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
    FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region

compiled by dbspc and run by runtime/distributed/spark_stages.py on `local-cluster[2,1,1024]` (two
executor JVMs of one core; the driver capped at spark.driver.memory=1g). Per size, the inputs are
generated in a child process (the harness's arrays never count in the driver); the first refresh is
the bulk load (the whole tables as the change); then each refresh applies one change batch (half
deletes of present orders, half inserts, and 100 customers moving region) and writes the view's
delta as parquet. Spark SQL's baseline recomputes the view over the same snapshot and rewrites it
(parquet), on the same cluster, in the same run; it is also the oracle: the integrated deltas must
equal it after every refresh.

With `--pipeline` the same inputs go through the user's path instead: a SparkPipeline with
execution="distributed" over two change tables (the change batches, offset = batch number),
which also checks every change against the tables and publishes the view as a table.

Per refresh: wall time, the stages' job (and how many jobs they took: one unless the slots could
not all run at once), the tasks' summed load/compute/write seconds, shuffle bytes
(Spark's REST API) and the bytes of the exchange files rows moved through (runtime/distributed/
exchange.py), state bytes read from storage (cache misses) and written, state held per
executor's Python workers, and the driver Python process's peak RSS. One JSON line per refresh, then
a markdown table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.scale_spike.common import Plan, diff, peak_rss_mb, session, stage_bytes  # noqa: E402
from dbspc.compiler.compile import compile_sql  # noqa: E402
from dbspc.runtime.distributed.pipeline_job import DistributedJob  # noqa: E402
from dbspc.runtime.distributed.spark_stages import WEIGHT_COLUMN, Refreshed, SparkStages  # noqa: E402
from dbspc.runtime.spark import SparkPipeline  # noqa: E402

VIEW_SQL = """SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region"""
PROGRAM = f"""
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE TABLE customers (id INT, region INT);
CREATE VIEW revenue AS {VIEW_SQL};
"""


def recompute(spark: SparkSession, plan: Plan, k: int, out: Path) -> tuple[dict[Any, tuple[int, Any]], float]:
    """Spark SQL: the view over snapshot k, rewritten as parquet; returns it and the seconds."""
    t = time.perf_counter()
    spark.read.parquet(str(plan.orders(k))).createOrReplaceTempView("orders")
    spark.read.parquet(str(plan.customers(k))).createOrReplaceTempView("customers")
    spark.sql(VIEW_SQL).write.mode("overwrite").parquet(str(out))
    seconds = time.perf_counter() - t
    rows = spark.read.parquet(str(out)).collect()
    return {r["region"]: (r["n"], r["total"]) for r in rows}, seconds


def change_frames(spark: SparkSession, plan: Plan, k: int) -> dict[str, Any]:
    """The change batch as the tables' columns plus a weight (the spike's files: w is last)."""
    return {
        "orders": spark.read.parquet(str(plan.orders_delta(k))).select("id", "customer_id", "amount", "w"),
        "customers": spark.read.parquet(str(plan.customers_delta(k))).select("id", "region", "w"),
    }


def run_size(spark: SparkSession, orders: int, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    data = work / f"data-{orders}"
    shutil.rmtree(work / f"state-{orders}", ignore_errors=True)  # a fresh start: the first refresh is the load
    gen = (
        "from pathlib import Path; from bench.scale_spike.common import generate; "
        f"generate(Path({str(data)!r}), {orders}, {args.change}, {args.refreshes}, {args.moves})"
    )
    if args.pipeline:
        gen += f"; from bench.spark_scale import change_tables; change_tables(Path({str(data)!r}), {args.refreshes})"
    subprocess.run([sys.executable, "-c", gen], check=True, cwd=ROOT)
    plan = Plan(data, args.refreshes)
    refresh = _pipeline(spark, plan, args, work / f"state-{orders}") if args.pipeline else _stages(spark, plan, args,
                                                                                                     work, orders)
    integrated: dict[tuple[Any, ...], int] = defaultdict(int)
    rows = []
    for k in range(args.refreshes + 1):
        before = stage_bytes(spark)
        t = time.perf_counter()
        result, contents = refresh(k)
        wall = time.perf_counter() - t
        moved = diff(stage_bytes(spark), before)
        facts = result.metrics()
        if contents is None:
            for r in spark.read.parquet(str(work / f"delta-{orders}-{k}")).collect():
                integrated[(r["region"], r["n"], r["total"])] += r[WEIGHT_COLUMN]
        else:
            integrated = defaultdict(int, {(r["region"], r["n"], r["total"]): 1 for r in contents.collect()})
        answer, sql_s = recompute(spark, plan, k, work / f"sql-{orders}")
        ours = {key[0]: (key[1], key[2]) for key, w in integrated.items() if w}
        per_worker: dict[int, int] = defaultdict(int)
        for m in facts:
            per_worker[m["pid"]] += m["state_bytes"]
        row = {
            "orders": orders,
            "refresh": "load" if k == 0 else k,
            "wall_s": round(wall, 2),
            "stages_s": round(result.timings.get("stages", 0.0), 2),  # the stages' job(s)
            "stage_jobs": int(result.timings.get("jobs", 0)),
            "load_s": round(sum(m["load_s"] for m in facts), 2),
            "compute_s": round(sum(m["compute_s"] for m in facts), 2),
            "write_s": round(sum(m["write_s"] for m in facts), 2),
            "spark_sql_s": round(sql_s, 2),
            "shuffle_mb": round(moved.get("shuffleWriteBytes", 0) / 2**20, 2),
            "exchange_mb": round(_exchanged(result) / 2**20, 2),
            "state_read_mb": round(sum(m["state_read_bytes"] for m in facts) / 2**20, 1),
            "state_written_mb": round(sum(m["state_written_bytes"] for m in facts) / 2**20, 1),
            "cached": f"{sum(m['cached'] for m in facts)}/{len(facts)}",
            "state_mb_per_worker": sorted(round(v / 2**20) for v in per_worker.values()),
            "driver_py_mb": round(peak_rss_mb()),
            "correct": ours == answer and all(w in (0, 1) for w in integrated.values()),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
        if not row["correct"]:
            wrong = sorted(set(ours.items()) ^ set(answer.items()), key=repr)[:6]
            raise SystemExit(f"refresh {k} at {orders} orders differs from Spark SQL, e.g. {wrong}")
    shutil.rmtree(data, ignore_errors=True)
    return rows


def _exchanged(result: Refreshed) -> int:
    """Bytes of the files the refresh moved rows through (exchange.py), beside Spark's shuffle."""
    where = result.facts.parent / "e" if result.facts else None
    return sum(p.stat().st_size for p in where.rglob("*.arrow")) if where and where.is_dir() else 0


def _stages(spark: SparkSession, plan: Plan, args: argparse.Namespace, work: Path, orders: int) -> Any:
    """Refresh k with SparkStages; the view's delta written as parquet (the deltas are read back)."""
    stages = SparkStages(spark, compile_sql(PROGRAM).circuit, work / f"state-{orders}", buckets=args.buckets,
                         columns={"revenue": ("region", "n", "total")})

    def refresh(k: int) -> tuple[Refreshed, None]:
        result = stages.refresh(change_frames(spark, plan, k))
        result.deltas["revenue"].write.mode("overwrite").parquet(str(work / f"delta-{orders}-{k}"))
        return result, None

    return refresh


def change_tables(data: Path, refreshes: int) -> None:
    """The change batches as change tables hold them: batch k as data/cdc_<table>/b<k>.parquet
    with its offset `v` = k as a column of the file (run in the generating process)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    plan = Plan(data, refreshes)
    for table, path in (("orders", plan.orders_delta), ("customers", plan.customers_delta)):
        (data / f"cdc_{table}").mkdir(exist_ok=True)
        for k in range(refreshes + 1):
            batch = pq.read_table(path(k))
            batch = batch.append_column("v", pa.array([k] * batch.num_rows, pa.int64()))
            pq.write_table(batch, data / f"cdc_{table}" / f"b{k:05d}.parquet")


def _pipeline(spark: SparkSession, plan: Plan, args: argparse.Namespace, root: Path) -> Any:
    """Refresh k with SparkPipeline(execution="distributed") over change tables holding batches
    0..k (`change_tables`); the published table is read back."""
    job = SparkPipeline(spark, root / "ckpt", output=root / "out", execution="distributed", buckets=args.buckets,
                        publish=False)
    job.change_table("orders", source="src_orders", offset="v", weight="w")
    job.change_table("customers", source="src_customers", offset="v", weight="w")

    # Known schemas: a catalog table's reader runs no job to infer one from the files, and
    # neither should the harness's temporary views within the timed refresh.
    schemas = {t: spark.read.parquet(str(plan.root / f"cdc_{t}" / "b00000.parquet")).schema
               for t in ("orders", "customers")}

    def sources(k: int) -> None:  # the change tables as they are after batch k was written
        for table in ("orders", "customers"):
            batches = [str(plan.root / f"cdc_{table}" / f"b{j:05d}.parquet") for j in range(k + 1)]
            spark.read.schema(schemas[table]).parquet(*batches).createOrReplaceTempView(f"src_{table}")

    sources(0)
    job.view(f"CREATE VIEW revenue AS {VIEW_SQL}")

    def refresh(k: int) -> tuple[Refreshed, Any]:
        sources(k)
        phases = job.refresh().timings
        print(json.dumps({"phases_s": {p: round(s, 2) for p, s in phases.items()}}), flush=True)
        assert isinstance(job.job, DistributedJob) and job.job.last is not None
        return job.job.last, job.table("revenue")

    return refresh


def table(rows: list[dict[str, Any]]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---:|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--master", default="local-cluster[2,1,1024]")
    ap.add_argument("--orders", type=int, nargs="+", default=[10_000_000, 50_000_000])
    ap.add_argument("--change", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=100)
    ap.add_argument("--refreshes", type=int, default=3)
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--work", default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--pipeline", action="store_true", help="run SparkPipeline(execution='distributed')")
    ap.add_argument("--no-aqe", action="store_true", help="adaptive query execution off (on by default, as in Spark)")
    args = ap.parse_args()
    spark = session(args.master, "dbspc-spark-scale", args.buckets)
    spark.conf.set("spark.sql.adaptive.enabled", str(not args.no_aqe).lower())
    work = Path(args.work or tempfile.mkdtemp(prefix="dbspc-scale-"))
    rows: list[dict[str, Any]] = []
    try:
        for n in args.orders:
            rows += run_size(spark, n, args, work)
    finally:
        spark.stop()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()

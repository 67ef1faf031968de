"""Measures both scale-out prototypes and Spark SQL's recompute on one cluster, in one run.

    cd /work/wt-scale && PYTHONPATH=$PWD /work/main/.venv/bin/python -m bench.scale_spike.run \\
        --master 'local-cluster[2,1,1024]' --orders 1000000 5000000 --change 10000 --refreshes 5

Per size: the inputs are generated in a child process (so the harness's arrays never count in the
driver's memory); then design (b) (bulk load = refresh 0 from empty state, then the refreshes), then
design (a) likewise, each checked after every refresh against Spark SQL recomputing the view on the
same snapshot (that recompute is timed: it is the baseline). One JSON line per refresh goes to
stdout (raw), then markdown tables.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from bench.scale_spike import design_a, design_b
from bench.scale_spike.common import (
    PYTHON,
    ROOT,
    Plan,
    diff,
    integrate,
    jvm_peak_rss_mb,
    peak_rss_mb,
    recompute,
    session,
    stage_bytes,
)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def timed_recompute(spark: SparkSession, plan: Plan, k: int) -> tuple[dict[int, tuple[int, int]], float]:
    t = time.perf_counter()
    answer = recompute(spark, plan, k)
    return answer, time.perf_counter() - t


def run_b(spark: SparkSession, plan: Plan, work: Path, buckets: int, size: int) -> list[dict[str, Any]]:
    labels = design_b.bucket_labels(spark, buckets)
    state, out = work / "b_state", work / "b_out"
    rows = []
    for k in range(plan.refreshes + 1):
        before = stage_bytes(spark)
        t = time.perf_counter()
        timing = design_b.refresh(spark, state, labels, plan.orders_delta(k), plan.customers_delta(k), out)
        wall = time.perf_counter() - t
        shuffled = diff(stage_bytes(spark), before)
        m = design_b.task_metrics(state, int(timing["version"]))
        truth, spark_s = timed_recompute(spark, plan, k)
        ok = integrate(spark.read.parquet(str(out / "v*"))) == truth
        committed = sum(m[f"{op}.committed_bytes"] for op in ("orders", "customers", "agg"))
        read = sum(m.get(f"{op}.disk_read_bytes", 0) for op in ("orders", "customers", "agg"))
        rows.append({"design": "b", "orders": size, "refresh": k, "wall_s": wall, **timing, **shuffled,
                     "state_bytes": committed, "state_read_bytes": read, "read_amplification": read / max(1, committed),
                     "spark_sql_s": spark_s, "correct": ok, "driver_py_peak_mb": peak_rss_mb(),
                     "driver_jvm_peak_mb": jvm_peak_rss_mb(spark), **m})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def run_a(spark: SparkSession, plan: Plan, work: Path, size: int) -> list[dict[str, Any]]:
    pipe = design_a.Pipeline(spark, work / "a")
    rows = []
    for k in range(plan.refreshes + 1):
        before = stage_bytes(spark)
        seen = len(pipe.progress)
        t = time.perf_counter()
        pipe.refresh(plan.orders_delta(k), plan.customers_delta(k))
        wall = time.perf_counter() - t
        shuffled = diff(stage_bytes(spark), before)
        truth, spark_s = timed_recompute(spark, plan, k)
        ok = integrate(pipe.output()) == truth
        state: dict[str, float] = {}
        durations: dict[str, float] = {}
        for p in pipe.progress[seen:]:
            for name, ms in p.get("durationMs", {}).items():
                durations[f"ms.{name}"] = durations.get(f"ms.{name}", 0) + ms
            for i, op in enumerate(p.get("stateOperators", [])):
                for key in ("numRowsTotal", "numRowsUpdated", "allUpdatesTimeMs", "commitTimeMs", "memoryUsedBytes"):
                    state[f"op{i}.{key}"] = op.get(key, 0)
                for key, v in op.get("customMetrics", {}).items():
                    if key.startswith("rocksdb"):
                        state[f"op{i}.{key}"] = state.get(f"op{i}.{key}", 0) + v
        rows.append({"design": "a", "orders": size, "refresh": k, "wall_s": wall, "chained": pipe.chained,
                     "chain_error": pipe.chain_error, "batches": len(pipe.progress) - seen, **shuffled,
                     "checkpoint_bytes": du(work / "a" / "ck"), "spark_sql_s": spark_s, "correct": ok,
                     "driver_py_peak_mb": peak_rss_mb(), "driver_jvm_peak_mb": jvm_peak_rss_mb(spark),
                     **durations, **state})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict[str, Any]], cols: list[str]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{v:,}"
        return str(v)

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", default="local-cluster[2,1,1024]")
    ap.add_argument("--orders", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--change", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=100)
    ap.add_argument("--refreshes", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=8)
    ap.add_argument("--designs", default="ba")
    ap.add_argument("--a-orders", type=int, nargs="*", default=None, help="sizes to run design (a) at (default all)")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="spark_scale-"))
    plans = {}
    for size in args.orders:
        t = time.perf_counter()
        code = ("import sys; from pathlib import Path; from bench.scale_spike.common import generate; "
                "generate(Path(sys.argv[1]), *map(int, sys.argv[2:]))")
        subprocess.run([PYTHON, "-c", code, str(work / f"data{size}"), str(size), str(args.change),
                        str(args.refreshes), str(args.moves)], check=True, cwd=ROOT)
        plans[size] = Plan(work / f"data{size}", args.refreshes)
        print(f"# generated {size:,} orders in {time.perf_counter() - t:.1f} s under {work}", flush=True)
    t = time.perf_counter()
    spark = session(args.master, "spark-scale-spike", args.buckets)
    spark.range(1).collect()
    print(f"# session on {args.master} up in {time.perf_counter() - t:.1f} s", flush=True)
    rows: list[dict[str, Any]] = []
    try:
        for size, plan in plans.items():
            if "b" in args.designs:
                rows += run_b(spark, plan, work / f"run{size}", args.buckets, size)
            if "a" in args.designs and (args.a_orders is None or size in args.a_orders):
                rows += run_a(spark, plan, work / f"run{size}", size)
            shutil.rmtree(work / f"run{size}", ignore_errors=True)
    finally:
        spark.stop()
    b = [r for r in rows if r["design"] == "b"]
    a = [r for r in rows if r["design"] == "a"]
    print("\n## (b) bucketed state\n")
    print(table(b, ["orders", "refresh", "wall_s", "join.load_s", "join.compute_s", "join.write_s", "commit_s",
                    "spark_sql_s", "shuffleWriteBytes", "inputBytes", "state_bytes", "state_read_bytes",
                    "read_amplification", "orders.cache_hit", "orders.written_bytes", "orders.merged_rows",
                    "orders.selective_rows", "orders.state_rows", "python_workers", "driver_py_peak_mb",
                    "driver_jvm_peak_mb", "correct"]))
    print("\n## (a) transformWithStateInPandas + RocksDB\n")
    print(table(a, ["orders", "refresh", "wall_s", "chained", "batches", "ms.addBatch", "ms.triggerExecution",
                    "spark_sql_s", "shuffleWriteBytes", "inputBytes", "checkpoint_bytes", "op1.numRowsTotal",
                    "op1.numRowsUpdated", "op1.allUpdatesTimeMs", "op1.rocksdbGetCount", "op1.rocksdbTotalBytesRead",
                    "op1.rocksdbSstFileSize", "op1.rocksdbBytesCopied", "op0.numRowsUpdated", "driver_py_peak_mb",
                    "driver_jvm_peak_mb",
                    "correct"]))
    if a and a[0]["chain_error"]:
        print(f"\nchaining refused: {a[0]['chain_error']}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

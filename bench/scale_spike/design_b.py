"""Design (b): batch refreshes over key-bucketed state, one Spark job per refresh.

    change batch (parquet) --bucket = pmod(hash(key), B)--> shuffle by bucket (both inputs, co-partitioned)
      -> cogroup.applyInArrow(join_task): per bucket, Δo ⋈ C + O ⋈ Δc + Δo ⋈ Δc against the bucket's
         traces (binary searches in sorted runs), pre-aggregated per region; traces updated
      -> shuffle by hash(region) -> groupBy.applyInArrow(agg_task): per region bucket, (count, sum)
         state updated, output = retract old row / insert new row of each touched region
      -> output changes written as parquet; then the driver switches the state manifest.
The first load is the same job with the whole tables as the change and empty state.
The driver only plans the job and writes the manifest: state and changes stay on the executors.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.scale_spike.buckets import Spec, commit, committed, load, state_bytes, update

ORDERS = Spec("orders", ["customer_id", "id", "amount"], ["w"],
              {"customer_id": pl.Int32, "id": pl.Int64, "amount": pl.Int64, "w": pl.Int64})
CUSTOMERS = Spec("customers", ["id", "region"], ["w"], {"id": pl.Int32, "region": pl.Int32, "w": pl.Int64})
AGG = Spec("agg", ["region"], ["n", "total"], {"region": pl.Int32, "n": pl.Int64, "total": pl.Int64})
SPECS = (ORDERS, CUSTOMERS, AGG)
PARTIAL = "region int, dn bigint, dsum bigint"
OUTPUT = "region int, n bigint, total bigint, w int"


def conform(spec: Spec, frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select([pl.col(c).cast(spec.types[c]) for c in spec.cols + spec.sums])


def _report(state: str, version: int, name: str, stats: dict[str, float]) -> None:
    """Per-task metrics as a small file the driver sums up (accumulators would do too)."""
    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx else 0
    d = Path(state) / "_metrics" / f"v{version}"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}-a{attempt}.json").write_text(json.dumps({**stats, "pid": os.getpid()}))


def join_task(state: str, base: int, version: int) -> Callable[[tuple, pa.Table, pa.Table], pa.Table]:
    def run(key: tuple, left: pa.Table, right: pa.Table) -> pa.Table:
        b = key[0].as_py()
        t0 = time.perf_counter()
        do = conform(ORDERS, pl.from_arrow(left).drop("bucket"))  # type: ignore[union-attr]
        dc = conform(CUSTOMERS, pl.from_arrow(right).drop("bucket"))  # type: ignore[union-attr]
        o_old = load(Path(state), ORDERS, b, base)
        c_old = load(Path(state), CUSTOMERS, b, base)
        t1 = time.perf_counter()
        # Δ(o ⋈ c) = Δo ⋈ C_old + O_old ⋈ Δc + Δo ⋈ Δc, each term keeping (region, amount, weight product).
        terms = [
            (do, c_old.lookup(do["customer_id"].to_numpy())),
            (o_old.lookup(dc["id"].to_numpy()), dc),
            (do, dc),
        ]
        joined = pl.concat([
            o.join(c, left_on="customer_id", right_on="id").select(
                "region", "amount", (pl.col("w") * pl.col("w_right")).alias("w"))
            for o, c in terms
        ])
        partial = joined.group_by("region").agg(pl.col("w").sum().alias("dn"), (pl.col("w") * pl.col("amount")).sum()
                                                 .alias("dsum")).filter((pl.col("dn") != 0) | (pl.col("dsum") != 0))
        t2 = time.perf_counter()
        o_new = update(Path(state), o_old, b, do, version)
        c_new = update(Path(state), c_old, b, dc, version)
        t3 = time.perf_counter()
        for name, new in (("orders", o_new), ("customers", c_new)):
            _report(state, version, f"{name}-b{b}", {**new.stats, "delta_rows": do.height if name == "orders"
                                                     else dc.height})
        _report(state, version, f"join-b{b}", {"load_s": t1 - t0, "compute_s": t2 - t1, "write_s": t3 - t2})
        return partial.with_columns(pl.col("region").cast(pl.Int32)).to_arrow()

    return run


def agg_task(state: str, base: int, version: int) -> Callable[[tuple, pa.Table], pa.Table]:
    def run(key: tuple, table: pa.Table) -> pa.Table:
        b = key[0].as_py()
        t0 = time.perf_counter()
        delta = pl.from_arrow(table).group_by("region").agg(  # type: ignore[union-attr]
            pl.col("dn").sum().alias("n"), pl.col("dsum").sum().alias("total"))
        delta = conform(AGG, delta)
        a_old = load(Path(state), AGG, b, base)
        t1 = time.perf_counter()
        old = a_old.lookup(delta["region"].to_numpy())
        new = delta.join(old, on="region", how="left").select(
            "region", (pl.col("n") + pl.col("n_right").fill_null(0)).alias("n"),
            (pl.col("total") + pl.col("total_right").fill_null(0)).alias("total"))
        changed = delta.filter((pl.col("n") != 0) | (pl.col("total") != 0))["region"]
        out = pl.concat([
            old.filter(pl.col("region").is_in(changed)).with_columns(pl.lit(-1, pl.Int32).alias("w")),
            new.filter(pl.col("region").is_in(changed) & (pl.col("n") != 0)).with_columns(pl.lit(1, pl.Int32)
                                                                                          .alias("w")),
        ])
        t2 = time.perf_counter()
        a_new = update(Path(state), a_old, b, delta, version)
        _report(state, version, f"agg-b{b}", {**a_new.stats, "delta_rows": delta.height, "load_s": t1 - t0,
                                              "compute_s": t2 - t1, "write_s": time.perf_counter() - t2})
        return out.select(pl.col("region").cast(pl.Int32), "n", "total", "w").to_arrow()

    return run


def bucket_labels(spark: SparkSession, buckets: int) -> list[int]:
    """For each residue r < buckets, the smallest int whose Spark hash lands in shuffle partition r.

    Grouping by such a label makes bucket b's task exactly partition b (no two buckets share a task),
    provided spark.sql.shuffle.partitions == buckets.
    """
    rows = spark.range(10_000).selectExpr("CAST(id AS INT) AS x", f"pmod(hash(CAST(id AS INT)), {buckets}) AS r") \
        .groupBy("r").agg(F.min("x").alias("x")).collect()
    labels = {r["r"]: r["x"] for r in rows}
    return [labels[r] for r in range(buckets)]


def _bucketed(df: DataFrame, key: str, labels: list[int]) -> DataFrame:
    arr = F.array(*[F.lit(x) for x in labels])
    return df.withColumn("bucket", F.element_at(arr, F.pmod(F.hash(F.col(key)), F.lit(len(labels))) + 1))


def refresh(spark: SparkSession, state: Path, labels: list[int], orders_delta: Path, customers_delta: Path,
            out: Path) -> dict[str, float]:
    """One refresh: Spark job over the change batch, then the manifest switch. Returns driver-side timings."""
    base = committed(state)
    version = base + 1
    t0 = time.perf_counter()
    od = spark.read.parquet(str(orders_delta)).select(
        "customer_id", "id", (F.col("amount") * 100).cast("bigint").alias("amount"), "w")
    cd = spark.read.parquet(str(customers_delta)).select("id", "region", "w")
    partial = _bucketed(od, "customer_id", labels).groupBy("bucket").cogroup(
        _bucketed(cd, "id", labels).groupBy("bucket")).applyInArrow(join_task(str(state), base, version), PARTIAL)
    changes = _bucketed(partial, "region", labels).groupBy("bucket").applyInArrow(
        agg_task(str(state), base, version), OUTPUT)
    changes.write.mode("overwrite").parquet(str(out / f"v{version}"))
    t1 = time.perf_counter()
    commit(state, version)
    return {"version": version, "job_s": t1 - t0, "commit_s": time.perf_counter() - t1}


def task_metrics(state: Path, version: int) -> dict[str, float]:
    """Sums of the tasks' reports for one version (the latest attempt of each task wins)."""
    d = state / "_metrics" / f"v{version}"
    per: dict[str, dict[str, float]] = {}
    for p in sorted(d.glob("*.json")):
        per[p.stem.rsplit("-a", 1)[0]] = json.loads(p.read_text())
    tot: dict[str, float] = {}
    for name, s in per.items():
        op = name.split("-")[0]
        for k, v in s.items():
            if k != "pid":
                tot[f"{op}.{k}"] = tot.get(f"{op}.{k}", 0) + v
    tot["python_workers"] = len({s["pid"] for s in per.values()})
    for spec in SPECS:
        tot[f"{spec.op}.committed_bytes"], tot[f"{spec.op}.files"] = state_bytes(state, spec, version)
    return tot

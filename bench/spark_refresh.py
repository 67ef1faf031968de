"""Benchmark: a SparkPipeline refresh of 1,000 changed rows on a 1M-row source, against
Spark recomputing the same views, in one run.

    .venv/bin/python bench/spark_refresh.py [--rows 1000000] [--change 1000] [--refreshes 10]

Sources (parquet directories behind temporary views, written with pyarrow):
  - orders_cdc: a change table (id, customer_id, amount, weight, batch); batch 0 holds
    the 1M rows, each later batch deletes change/2 present rows and inserts change/2;
  - customers: an append-only table of 100k customers in 1,000 regions.
Views:
  - revenue: SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c ...
    GROUP BY c.region (1,000 rows);
  - big_orders: SELECT id, customer_id, amount FROM orders WHERE amount > 50 (~500k
    rows: the write-back of a big view changed a little).
Spark's side: the same SELECTs over a plain parquet copy of the current orders (kept up
to date by the benchmark, untimed), executed and written as parquet, as a job
recomputing the views would. Each refresh is broken down into transfer (Spark -> Arrow
-> Z-set batches), compute (the circuit step), write-back (sink files), checkpoint
(state parts + manifest switch) and publish (temporary views, garbage collection).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dbspc.runtime.spark import SparkPipeline, local_session

CUSTOMERS = 100_000
REGIONS = 1_000
REVENUE = """SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region"""
BIG = "SELECT id, customer_id, amount FROM orders WHERE amount > 50"
PHASES = ("transfer", "compute", "write_back", "checkpoint", "publish", "total")


def orders_frame(ids: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": ids.astype(np.int64),
            "customer_id": rng.integers(0, CUSTOMERS, len(ids)).astype(np.int32),
            "amount": pl.Series(np.round(rng.random(len(ids)) * 100, 2)).cast(pl.Decimal(12, 2)),
        }
    )


def write(path: Path, frame: pl.DataFrame) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(frame.to_arrow(), path)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def files_of(*roots: Path) -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_mtime_ns, p.stat().st_size) for r in roots for p in r.rglob("*") if p.is_file()}


def bytes_written(before: dict[Path, tuple[int, int]], after: dict[Path, tuple[int, int]]) -> int:
    """Sizes of the files a refresh created or rewrote."""
    return sum(size for p, (mtime, size) in after.items() if before.get(p, (None, None))[0] != mtime)


def same_revenue(ours: pl.DataFrame, theirs: pl.DataFrame) -> bool:
    """Equal counts and (decimal, so exact) sums per region."""
    both = ours.join(theirs, on="region", how="full", suffix="_other")
    return bool(
        both.height == ours.height == theirs.height
        and (both["n"] == both["n_other"]).all()
        and (both["total"] == both["total_other"]).all()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--change", type=int, default=1_000)
    parser.add_argument("--refreshes", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument("--execution", choices=["driver", "distributed"], default="driver")
    parser.add_argument("--buckets", type=int, default=8, help="distributed: state buckets")
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="dbspc-bench-"))
    shutil.rmtree(work, ignore_errors=True)
    rng = np.random.default_rng(7)
    spark = local_session(app="dbspc-bench", warehouse=work / "warehouse")

    current = orders_frame(np.arange(args.rows), rng)
    next_id = args.rows
    write(
        work / "orders_cdc" / "b00000.parquet",
        current.with_columns(pl.lit(1, pl.Int32()).alias("weight"), pl.lit(0, pl.Int64()).alias("batch")),
    )
    customers = pl.DataFrame(
        {
            "id": np.arange(CUSTOMERS, dtype=np.int32),
            "region": rng.integers(0, REGIONS, CUSTOMERS).astype(np.int32),
            "batch": np.zeros(CUSTOMERS, dtype=np.int32),
        }
    )
    write(work / "customers" / "b0.parquet", customers)
    write(work / "orders_now" / "v00000.parquet", current)
    for name in ("orders_cdc", "customers", "orders_now"):
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW bench_{name} USING parquet OPTIONS (path '{work / name}')")
    spark.table("bench_customers").drop("batch").createOrReplaceTempView("customers")
    spark.table("bench_orders_now").createOrReplaceTempView("orders")

    job = SparkPipeline(
        spark,
        work / "checkpoint",
        output=work / "warehouse" / "views",
        view_prefix="out_",
        execution=args.execution,
        buckets=args.buckets,
    )
    job.change_table("orders", source="bench_orders_cdc", offset="batch", weight="weight")
    job.append_table("customers", source="bench_customers", offset="batch")
    job.view(f"CREATE VIEW revenue AS {REVENUE}")
    job.view(f"CREATE VIEW big_orders AS {BIG}")

    started = time.perf_counter()
    first = job.refresh()
    load = time.perf_counter() - started
    print(
        f"initial load: {args.rows:,} orders + {CUSTOMERS:,} customers in {load:.2f} s: "
        + ", ".join(f"{k} {v:.2f}" for k, v in first.timings.items()),
        flush=True,
    )

    per_phase: dict[str, list[float]] = {p: [] for p in PHASES}
    recompute: dict[str, list[float]] = {"revenue": [], "big_orders": []}
    written: list[int] = []
    for k in range(1, args.refreshes + 1):
        gone = rng.choice(current["id"].to_numpy(), size=args.change // 2, replace=False)
        deleted = current.filter(pl.col("id").is_in(gone))
        inserted = orders_frame(np.arange(next_id, next_id + args.change - args.change // 2), rng)
        next_id += inserted.height
        batch = pl.concat(
            [
                deleted.with_columns(pl.lit(-1, pl.Int32()).alias("weight")),
                inserted.with_columns(pl.lit(1, pl.Int32()).alias("weight")),
            ]
        ).with_columns(pl.lit(k, pl.Int64()).alias("batch"))
        write(work / "orders_cdc" / f"b{k:05d}.parquet", batch)
        current = pl.concat([current.filter(~pl.col("id").is_in(gone)), inserted])
        # A new file name each time: Spark caches file sizes, so never rewrite a file in place.
        write(work / "orders_now" / f"v{k:05d}.parquet", current)
        (work / "orders_now" / f"v{k - 1:05d}.parquet").unlink()
        spark.catalog.refreshTable("bench_orders_now")
        spark.table("bench_orders_now").createOrReplaceTempView("orders")

        before = files_of(work / "warehouse" / "views", work / "checkpoint")
        result = job.refresh()
        assert result.committed and result.rows_read["orders"] == args.change
        written.append(bytes_written(before, files_of(work / "warehouse" / "views", work / "checkpoint")))
        for phase in PHASES:
            per_phase[phase].append(result.timings.get(phase, 0.0))
        for view, query in (("revenue", REVENUE), ("big_orders", BIG)):
            t0 = time.perf_counter()
            spark.sql(query).write.mode("overwrite").parquet(str(work / "recompute" / view))
            recompute[view].append(time.perf_counter() - t0)
        print(
            f"refresh {k}: "
            + ", ".join(f"{p} {result.timings.get(p, 0):.3f}" for p in PHASES)
            + f"; Spark recompute revenue {recompute['revenue'][-1]:.3f}, big_orders {recompute['big_orders'][-1]:.3f}",
            flush=True,
        )

    # The views agree with Spark's recomputation.
    truth = (
        current.join(customers, left_on="customer_id", right_on="id")
        .group_by("region")
        .agg(pl.len().cast(pl.Int64()).alias("n"), pl.col("amount").sum().alias("total"))
    )
    ours_revenue = pl.from_arrow(job.table("revenue").toArrow())
    assert isinstance(ours_revenue, pl.DataFrame)
    assert same_revenue(ours_revenue, truth), "dbspc's revenue differs from polars on the current orders"
    spark_revenue = pl.from_arrow(spark.sql(REVENUE).toArrow())
    assert isinstance(spark_revenue, pl.DataFrame)
    assert same_revenue(spark_revenue, truth), "Spark's revenue differs from polars on the current orders"
    ours = job.table("big_orders")
    assert ours.exceptAll(spark.sql(BIG)).count() == 0 and spark.sql(BIG).exceptAll(ours).count() == 0
    big_rows = job.table("big_orders").count()

    def med(xs: list[float]) -> float:
        return statistics.median(xs)

    def p90(xs: list[float]) -> float:
        return sorted(xs)[max(0, round(0.9 * len(xs)) - 1)]

    spark_both = [a + b for a, b in zip(recompute["revenue"], recompute["big_orders"], strict=True)]
    print()
    print(
        f"`.venv/bin/python bench/spark_refresh.py --rows {args.rows} --change {args.change} "
        f"--refreshes {args.refreshes} --execution {args.execution} --buckets {args.buckets}`"
    )
    print()
    print(
        f"{args.change:,} changed rows per refresh on a {args.rows:,}-row change table; views revenue "
        f"(join + GROUP BY, {REGIONS:,} rows) and big_orders (filter, {big_rows:,} rows); "
        f"median (p90) of {args.refreshes} refreshes, seconds."
    )
    print()
    print("| phase | median | p90 |")
    print("|---|---|---|")
    for phase in PHASES:
        name = {"write_back": "write-back", "total": "**refresh total**"}.get(phase, phase)
        print(f"| {name} | {med(per_phase[phase]):.3f} | {p90(per_phase[phase]):.3f} |")
    print(f"| Spark recompute + write: revenue | {med(recompute['revenue']):.3f} | {p90(recompute['revenue']):.3f} |")
    print(
        f"| Spark recompute + write: big_orders | {med(recompute['big_orders']):.3f} "
        f"| {p90(recompute['big_orders']):.3f} |"
    )
    print(f"| **Spark recompute + write, both views** | {med(spark_both):.3f} | {p90(spark_both):.3f} |")
    print()
    print(
        f"speed-up (Spark recompute of both views / refresh total, medians): "
        f"{med(spark_both) / med(per_phase['total']):.1f}x"
    )
    print(
        f"bytes written per refresh (sinks + checkpoint), median: {med([float(w) for w in written]) / 1e3:.0f} kB "
        f"(big_orders alone is {du(work / 'recompute' / 'big_orders') / 1e6:.1f} MB as parquet)"
    )
    print(f"initial load (first refresh, whole tables): {load:.2f} s")
    job.close()
    spark.stop()
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

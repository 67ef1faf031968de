"""Benchmark: incremental step of a join + GROUP BY view against DuckDB recomputing it.

In one run, for base tables of 1M and 10M order rows, it loads the tables, then applies
change steps of 1,000 rows (half inserts, half deletes of present rows) and reports:
  - the median (and p90) incremental step time at each size, and their ratio;
  - DuckDB's full recomputation of the same view on the same data, and the speed-up.

    .venv/bin/python bench/join_groupby.py [--sizes 1000000 10000000] [--steps 20]
        [--change 1000] [--new-rows]   (e.g. --change 100000 --new-rows: rows per second of change)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet

PROGRAM = """
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE TABLE customers (id INT, region INT);
CREATE VIEW revenue AS
SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region;
"""
QUERY = """
SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region
"""
CUSTOMERS = 100_000
REGIONS = 1_000
CHANGE = 1_000


def customers_frame(rng: np.random.Generator) -> pl.DataFrame:
    """The customers, each in a random region (drawn before the orders, from the same rng)."""
    return pl.DataFrame(
        {
            "c0": np.arange(CUSTOMERS, dtype=np.int32),
            "c1": rng.integers(0, REGIONS, CUSTOMERS).astype(np.int32),
            WEIGHT: np.ones(CUSTOMERS, dtype=np.int64),
        }
    )


def orders_frame(ids: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "c0": ids.astype(np.int64),
            "c1": rng.integers(0, CUSTOMERS, len(ids)).astype(np.int32),
            # cents as an exact DECIMAL(10,2): money is decimal, and SUM of it is a running sum
            # (casting to scale 2 before dividing keeps the cents: at scale 0, polars' quotient
            # would keep scale 0 and give whole numbers)
            "c2": (pl.Series(rng.integers(0, 10_000, len(ids))).cast(pl.Decimal(10, 2)) / 100).cast(pl.Decimal(10, 2)),
            WEIGHT: np.ones(len(ids), dtype=np.int64),
        }
    )


def run_size(
    n: int, steps: int, change: int = CHANGE, new_only: bool = False, seed: int = 7, settle: bool = False
) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    p = Pipeline.from_sql(PROGRAM)
    customers = customers_frame(rng)
    orders = orders_frame(np.arange(n), rng)
    t0 = time.perf_counter()
    p.step({"customers": ZSet.from_frame(customers, p.table_types("customers"))})
    chunk = 1_000_000
    for start in range(0, n, chunk):
        p.step({"orders": ZSet.from_frame(orders.slice(start, chunk), p.table_types("orders"))})
    load = time.perf_counter() - t0
    # The load leaves its last large merges on the merger thread; the first steps run
    # beside them unless --settle waits for them here (the wait is reported apart).
    t0 = time.perf_counter()
    if settle:
        for trace in p.executor.traces().values():
            trace.settle()
    settle_s = time.perf_counter() - t0

    live = orders  # the current contents, to pick deletions of present rows
    next_id = n
    times = []
    for _ in range(steps):
        k = change if new_only else change // 2
        gone = live.head(0) if new_only else live.sample(k, seed=int(rng.integers(1 << 30)))
        new = orders_frame(np.arange(next_id, next_id + k), rng)
        next_id += k
        batch = pl.concat([gone.with_columns(pl.lit(-1, pl.Int64).alias(WEIGHT)), new])
        z = ZSet.from_frame(batch, p.table_types("orders"))
        t = time.perf_counter()
        p.step({"orders": z})
        times.append(time.perf_counter() - t)
        live = pl.concat([live.join(gone.select("c0"), on="c0", how="anti"), new])

    con = duckdb.connect()
    con.register("orders_df", live.drop(WEIGHT).rename({"c0": "id", "c1": "customer_id", "c2": "amount"}))
    con.register("customers_df", customers.drop(WEIGHT).rename({"c0": "id", "c1": "region"}))
    con.execute("CREATE TABLE orders AS SELECT * FROM orders_df")
    con.execute("CREATE TABLE customers AS SELECT * FROM customers_df")
    con.execute(QUERY).fetchall()  # warm up
    recompute = []
    for _ in range(5):
        t = time.perf_counter()
        con.execute(QUERY).fetchall()
        recompute.append(time.perf_counter() - t)
    times.sort()
    return {
        "rows": n,
        "load_s": load,
        "settle_s": settle_s,
        "step_median_ms": statistics.median(times) * 1e3,
        "step_p90_ms": times[int(0.9 * (len(times) - 1))] * 1e3,
        "step_p99_ms": times[int(0.99 * (len(times) - 1))] * 1e3,
        "step_max_ms": times[-1] * 1e3,
        "duckdb_ms": statistics.median(recompute) * 1e3,
        "state_rows": p.executor.state_rows(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--change", type=int, default=CHANGE, help="rows changed per step")
    parser.add_argument("--new-rows", action="store_true", help="every changed row is a new order (no deletes)")
    parser.add_argument(
        "--settle", action="store_true", help="wait for the load's background merges before the timed steps"
    )
    parser.add_argument("--svg", type=Path, default=None, help="also write a chart: step time against state size")
    args = parser.parse_args()
    results = [run_size(n, args.steps, args.change, args.new_rows, settle=args.settle) for n in args.sizes]
    kind = "all new rows" if args.new_rows else "half deletes"
    print(f"change per step: {args.change:,} rows ({kind}); {args.steps} steps per size")
    if args.settle:
        waits = ", ".join(f"{r['settle_s']:.1f} s" for r in results)
        print(f"waited after each load for its background merges: {waits}")
    print(
        "| orders rows | load (s) | step median (ms) | step p90 (ms) | step p99 (ms) | step max (ms) "
        "| changed rows / s | DuckDB recompute (ms) | speed-up |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        rate = args.change / (r["step_median_ms"] / 1e3)
        print(
            f"| {r['rows']:,} | {r['load_s']:.1f} | {r['step_median_ms']:.1f} | {r['step_p90_ms']:.1f} "
            f"| {r['step_p99_ms']:.1f} "
            f"| {r['step_max_ms']:.1f} | {rate:,.0f} | {r['duckdb_ms']:.1f} "
            f"| {r['duckdb_ms'] / r['step_median_ms']:.1f}x |"
        )
    if args.svg is not None:
        from bench.chart import line_chart

        chart = line_chart(
            {
                "dbspc step (median)": [(r["rows"], r["step_median_ms"]) for r in results],
                "dbspc step (p90)": [(r["rows"], r["step_p90_ms"]) for r in results],
                "DuckDB recompute": [(r["rows"], r["duckdb_ms"]) for r in results],
            },
            f"join + GROUP BY, {args.change:,}-row change per step",
            "orders rows (state size)",
            "milliseconds per step",
        )
        args.svg.write_text(chart)
    if len(results) >= 2:
        ratio = results[-1]["step_median_ms"] / results[0]["step_median_ms"]
        print(f"step time ratio {results[-1]['rows']:,} / {results[0]['rows']:,} rows: {ratio:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()

"""A step's wall time for views of different shapes over the join + GROUP BY bench's tables.

bench/join_groupby.py times one view, whose aggregates (COUNT, SUM) are linear. Other
shapes take other kernels: DISTINCT its incremental H, MIN/MAX the aggregate's multiset
of values, ORDER BY ... LIMIT the top-k state, COUNT(DISTINCT) the distinct pairs under a
linear aggregate, LEFT JOIN the outer join's padding, windows their partitions' state.
This loads the same tables (its generator and seed) for each view in turn and applies
the same change steps (half deletes of present orders, half new ones), printing one
JSON line per view: the median, p90, p99 and slowest step in wall time after `--warm`
untimed steps.
`--duckdb N` adds DuckDB's time to compute the same query from scratch over the final
tables (median of N runs) and the speed-up. Run it for two checkouts on their own
PYTHONPATH to compare them:

    PYTHONPATH=. .venv/bin/python bench/view_shapes.py --orders 200000 --duckdb 15
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.join_groupby import customers_frame, orders_frame
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet

TABLES = """
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE TABLE customers (id INT, region INT);
"""
JOIN = "FROM orders o JOIN customers c ON o.customer_id = c.id"
VIEWS = {
    "sum": f"SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total {JOIN} GROUP BY c.region",
    "distinct": f"SELECT DISTINCT o.customer_id, c.region {JOIN} WHERE o.amount > 50",
    "minmax": f"SELECT c.region, MAX(o.amount) AS top, MIN(o.amount) AS low {JOIN} GROUP BY c.region",
    "topk": "SELECT id, amount FROM orders ORDER BY amount DESC, id LIMIT 10",
    "avg": f"SELECT c.region, AVG(o.amount) AS mean {JOIN} GROUP BY c.region HAVING COUNT(*) > 10",
    "count_distinct": f"SELECT c.region, COUNT(DISTINCT o.customer_id) AS buyers {JOIN} GROUP BY c.region",
    "distinct_and_totals": (
        "SELECT customer_id % 100 AS g, COUNT(DISTINCT amount) AS amounts, COUNT(DISTINCT customer_id) AS buyers,"
        " COUNT(*) AS n FROM orders GROUP BY customer_id % 100"
    ),
    "left_join": (
        "SELECT c.region, COUNT(o.id) AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id"
        " GROUP BY c.region"
    ),
    "top3_per_customer": (
        "SELECT customer_id, id, amount FROM (SELECT customer_id, id, amount, ROW_NUMBER() OVER"
        " (PARTITION BY customer_id ORDER BY amount DESC, id) AS rn FROM orders) t WHERE rn <= 3"
    ),
    "lag": "SELECT id, customer_id, LAG(amount) OVER (PARTITION BY customer_id ORDER BY id) AS prev FROM orders",
}


def changes(orders: pl.DataFrame, steps: int, size: int, rng: np.random.Generator) -> list[pl.DataFrame]:
    """`steps` changes of `size` rows: half deletes of present orders, half new orders."""
    live, next_id, out = orders, orders.height, []
    for _ in range(steps):
        gone = live.sample(size // 2, seed=int(rng.integers(1 << 30)))
        new = orders_frame(np.arange(next_id, next_id + size // 2), rng)
        next_id += size // 2
        out.append(pl.concat([gone.with_columns(pl.lit(-1, pl.Int64).alias(WEIGHT)), new]))
        live = pl.concat([live.join(gone.select("c0"), on="c0", how="anti"), new])
    return out


def time_view(name: str, orders_n: int, steps: int, warm: int, size: int, duckdb_runs: int = 0) -> dict[str, object]:
    rng = np.random.default_rng(7)
    p = Pipeline.from_sql(f"{TABLES}CREATE VIEW v AS {VIEWS[name]};")
    customers, orders = customers_frame(rng), orders_frame(np.arange(orders_n), rng)
    p.step({"customers": ZSet.from_frame(customers, p.table_types("customers"))})
    p.step({"orders": ZSet.from_frame(orders, p.table_types("orders"))})
    for trace in [*p.executor.traces().values(), *p.tables.values()]:
        trace.settle()
    batches = [ZSet.from_frame(c, p.table_types("orders")) for c in changes(orders, warm + steps, size, rng)]
    wall = []
    for z in batches:
        t = time.perf_counter()
        p.step({"orders": z})
        wall.append(time.perf_counter() - t)
    timed = sorted(wall[warm:])
    out: dict[str, object] = {
        "view": name,
        "orders": orders_n,
        "step_median_ms": round(statistics.median(timed) * 1e3, 2),
        "step_p90_ms": round(timed[int(0.9 * (len(timed) - 1))] * 1e3, 2),
        "step_p99_ms": round(timed[int(0.99 * (len(timed) - 1))] * 1e3, 2),
        "step_max_ms": round(timed[-1] * 1e3, 2),
    }
    if duckdb_runs:
        recompute = duckdb_ms(p, VIEWS[name], duckdb_runs)
        out["duckdb_median_ms"] = round(recompute, 2)
        out["speedup"] = round(recompute / statistics.median(timed) / 1e3, 2)
    return out


def duckdb_ms(p: Pipeline, query: str, runs: int) -> float:
    """DuckDB's median time to compute `query` from scratch over the pipeline's tables as
    they stand (in DuckDB tables, fetched into Python), after one untimed run."""
    import duckdb

    con = duckdb.connect()
    for table in ("orders", "customers"):
        frame = p.table_contents(table).frame
        names = dict(zip(frame.columns[:-1], p.table_columns(table), strict=True))
        con.register(f"{table}_df", frame.drop(WEIGHT).rename(names))
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM {table}_df")
    con.execute(query).fetchall()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        con.execute(query).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=200_000)
    parser.add_argument("--steps", type=int, default=40, help="timed steps")
    parser.add_argument("--warm", type=int, default=10, help="untimed steps first")
    parser.add_argument("--change", type=int, default=1_000, help="rows changed per step")
    parser.add_argument("--views", nargs="+", choices=sorted(VIEWS), default=list(VIEWS))
    parser.add_argument(
        "--duckdb", type=int, default=0, metavar="RUNS", help="also time DuckDB recomputing the view, median of RUNS"
    )
    args = parser.parse_args()
    for name in args.views:
        result = time_view(name, args.orders, args.steps, args.warm, args.change, args.duckdb)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

"""The join + GROUP BY view's step in CPU time, for before/after comparisons on a busy machine.

bench/join_groupby.py times steps by the wall clock, which on a shared machine moves with
whatever else runs. This loads the same tables (its generator and seed), waits for every
trace's merges, then applies change steps of half deletes of present rows and half new
orders, and prints one JSON line: the median step in this thread's CPU time, in the
process's CPU time (which adds the work polars hands to its thread pool: that was a
third of a step before the seventh round, and this thread's clock did not see it) and in
wall time, and the wall-clock p99, over the steps after the first twenty. Run it alternately
for two checkouts, each on its own PYTHONPATH, and compare the rounds:

    for r in 1 2 3 4; do for tree in ../before .; do
        PYTHONPATH=$tree .venv/bin/python bench/join_groupby_cpu.py --orders 1000000; done; done
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.join_groupby import PROGRAM, customers_frame, orders_frame
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet

WARM = 20


def by_operator(p: Pipeline) -> Counter[str]:
    """Thread CPU time (ns) of each operator's evaluation, of the changes' checks and of
    the executor's whole step (its operators, then the commits: trace inserts and
    merges), summed over the steps from now on."""
    parts: Counter[str] = Counter()
    executor = p.executor

    def timed(run: Callable[..., Any], label: Callable[..., str]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            t = time.thread_time_ns()
            try:
                return run(*args)
            finally:
                parts[label(*args)] += time.thread_time_ns() - t

        return wrapper

    executor.evaluate = timed(executor.evaluate, lambda n, *_: f"%{n} {executor.circuit[n].kind}")  # type: ignore[method-assign]
    executor.step = timed(executor.step, lambda *_: "executor step: the operators, then the commits")  # type: ignore[method-assign]
    p._checked = timed(p._checked, lambda *_: "change checks")  # type: ignore[method-assign]
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=100, help="timed steps (after 20 untimed)")
    parser.add_argument("--change", type=int, default=1_000, help="rows changed per step")
    parser.add_argument(
        "--by-operator",
        action="store_true",
        help="also print each operator's CPU time a step, and the checks'",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    p = Pipeline.from_sql(PROGRAM)
    customers, orders = customers_frame(rng), orders_frame(np.arange(args.orders), rng)
    p.step({"customers": ZSet.from_frame(customers, p.table_types("customers"))})
    for start in range(0, args.orders, 1_000_000):
        p.step({"orders": ZSet.from_frame(orders.slice(start, 1_000_000), p.table_types("orders"))})
    for trace in [*p.executor.traces().values(), *p.tables.values()]:
        trace.settle()
    # the changes are made before timing, so the loop times the steps alone
    live, next_id, changes = orders, args.orders, []
    k = args.change // 2
    for _ in range(WARM + args.steps):
        gone = live.sample(k, seed=int(rng.integers(1 << 30)))
        new = orders_frame(np.arange(next_id, next_id + k), rng)
        next_id += k
        batch = pl.concat([gone.with_columns(pl.lit(-1, pl.Int64).alias(WEIGHT)), new])
        changes.append(ZSet.from_frame(batch, p.table_types("orders")))
        live = pl.concat([live.join(gone.select("c0"), on="c0", how="anti"), new])
    parts = by_operator(p) if args.by_operator else None
    cpu, process, wall = [], [], []
    for number, z in enumerate(changes):
        if parts is not None and number == WARM:
            parts.clear()
        c, pc, w = time.thread_time(), time.process_time(), time.perf_counter()
        p.step({"orders": z})
        cpu.append(time.thread_time() - c)
        process.append(time.process_time() - pc)
        wall.append(time.perf_counter() - w)
    cpu, process, wall = cpu[WARM:], process[WARM:], sorted(wall[WARM:])
    if parts is not None:
        for part, ns in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"{ns / args.steps / 1e6:8.3f} ms  {part}")
    print(
        json.dumps(
            {
                "orders": args.orders,
                "cpu_ms": round(statistics.median(cpu) * 1e3, 2),
                "process_cpu_ms": round(statistics.median(process) * 1e3, 2),
                "wall_ms": round(statistics.median(wall) * 1e3, 2),
                "p99_wall_ms": round(wall[int(0.99 * (len(wall) - 1))] * 1e3, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

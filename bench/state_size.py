"""State size: the bytes each operator's state holds against the Arrow size of the rows.

Loads bench/join_groupby.py's tables (100,000 customers, N orders, the same generator and
seed) into its join + GROUP BY view, waits for the background merges, and prints for
every trace (the circuit's integrals and aggregate state, and the pipeline's whole-row
index of a table no operator integrates as it comes, which checks deletes; here none,
the join's integrals serve) its rows, bytes and bytes per row, and the bytes operators
hold beside their traces (compiled indexes, a linear aggregate's group table), then the
total against the Arrow size of the two tables (their columns, without weights).

    .venv/bin/python bench/state_size.py [--orders 1000000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.join_groupby import CUSTOMERS, PROGRAM, customers_frame, orders_frame
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet


def arrow_bytes(frame: pl.DataFrame) -> int:
    return int(frame.drop(WEIGHT).to_arrow().nbytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1_000_000)
    n = parser.parse_args().orders
    rng = np.random.default_rng(7)
    p = Pipeline.from_sql(PROGRAM)
    customers = customers_frame(rng)
    orders = orders_frame(np.arange(n), rng)
    p.step({"customers": ZSet.from_frame(customers, p.table_types("customers"))})
    for start in range(0, n, 1_000_000):
        p.step({"orders": ZSet.from_frame(orders.slice(start, 1_000_000), p.table_types("orders"))})
    traces: dict[str, Trace] = {
        **p.executor.traces(),
        **{f"table {t} (whole-row index)": x for t, x in p.tables_apart().items()},
    }
    for trace in traces.values():
        trace.settle()
    tables = arrow_bytes(orders) + arrow_bytes(customers)
    print(f"orders {n:,} rows, customers {CUSTOMERS:,}: Arrow size of their columns {tables / 1e6:.1f} MB")
    print("| state | key columns | rows | MB | bytes per row |")
    print("|---|---|---:|---:|---:|")
    for name, trace in traces.items():
        rows, size = len(trace), trace.nbytes()
        print(f"| {name} | {trace.key} | {rows:,} | {size / 1e6:.1f} | {size / max(rows, 1):.1f} |")
    circuit = sum(t.nbytes() for name, t in traces.items() if not name.startswith("table "))
    # what operators hold beside their traces: compiled indexes, a linear aggregate's table
    beside = sum(size for _, size in p.executor.state_sizes().values()) - circuit
    print(f"| held beside the traces (compiled indexes, group tables) | | | {beside / 1e6:.1f} | |")
    circuit += beside
    total = circuit + sum(t.nbytes() for name, t in traces.items() if name.startswith("table "))
    print(f"all state: {total / 1e6:.1f} MB = {total / tables:.2f}x the tables' Arrow size")
    print(f"the circuit's state alone: {circuit / 1e6:.1f} MB = {circuit / tables:.2f}x")


if __name__ == "__main__":
    main()

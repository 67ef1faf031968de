"""A recursive view's step in CPU time, for before/after comparisons on a busy machine.

bench/recursion.py times steps by the wall clock, which on a shared machine moves with
whatever else runs. This loads the same workload (its graph generator, one view) and
prints one JSON line: the median step in this thread's CPU time and in wall time, over
the steps after the first three. Run it alternately for two checkouts, each on its own
PYTHONPATH, and compare the medians of the rounds:

    for r in 1 2 3 4 5; do for tree in ../before .; do
        PYTHONPATH=$tree .venv/bin/python bench/recursion_cpu.py tc --nodes 20000; done; done

polars' own threads are not counted: the small batches of a step run in the calling
thread, so the CPU time is nearly all of it (compare it with the wall time printed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.recursion import make_workload, program
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("view", choices=["tc", "cc"])
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    w = make_workload(args.nodes, 10, 1.5, args.steps, 100, args.seed)
    p = Pipeline.from_sql(program(args.view))
    types = p.table_types("edges")
    p.step({"edges": ZSet.from_frame(w.initial.with_columns(pl.lit(1, pl.Int64).alias("w")), types)})
    cpu, wall = [], []
    for change in w.steps:
        z = ZSet.from_frame(change, types)
        c, t = time.thread_time(), time.perf_counter()
        p.step({"edges": z})
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - t)
    import dbspc

    print(
        json.dumps(
            {
                "dbspc": str(Path(dbspc.__file__).resolve().parent.parent),
                "view": args.view,
                "nodes": args.nodes,
                "cpu_ms": round(statistics.median(cpu[3:]) * 1e3, 2),
                "wall_ms": round(statistics.median(wall[3:]) * 1e3, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

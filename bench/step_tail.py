"""A recursive view's step time alone, with its tail: median, mean, p90 and p99 over many
steps, wall clock and the main thread's CPU time.

bench/recursion.py reports medians over a few dozen steps beside DuckDB's recompute; the
p99 needs hundreds of steps and nothing else running in the process. This loads
bench/recursion.py's graph (--nodes, groups of 10, degree 1.5) in one step, converts every
change up front, then times each step of 100 edge changes (half deletions) and reports the
steps after the first --warm.

    .venv/bin/python bench/step_tail.py [--views tc cc] [--nodes 20000] [--steps 340] [--warm 40]

Run the trees to compare alternately (PYTHONPATH=<checkout>): the shared machine's load
moves medians by 20-30% between minutes, a p99 ÷ median far less.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.recursion import make_workload, program
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet


def tail(view: str, nodes: int, steps: int, warm: int, seed: int = 7) -> dict[str, object]:
    w = make_workload(nodes, 10, 1.5, steps, 100, seed)
    p = Pipeline.from_sql(program(view))
    types = p.table_types("edges")
    p.step({"edges": ZSet.from_frame(w.initial.with_columns(pl.lit(1, pl.Int64).alias(WEIGHT)), types)})
    changes = [ZSet.from_frame(d, types) for d in w.steps]
    wall, cpu = [], []
    for z in changes:
        c0, t0 = time.thread_time(), time.perf_counter()
        p.step({"edges": z})
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    out: dict[str, object] = {"view": view, "nodes": nodes, "steps": len(wall) - warm}
    for name, times in (("wall", wall), ("cpu", cpu)):
        ms = np.array(times[warm:]) * 1e3
        median = float(np.median(ms))
        out[name] = {
            "median_ms": round(median, 2),
            "mean_ms": round(float(ms.mean()), 2),
            "p90_ms": round(float(np.percentile(ms, 90)), 2),
            "p99_ms": round(float(np.percentile(ms, 99)), 2),
            "p99_over_median": round(float(np.percentile(ms, 99)) / median, 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--views", nargs="+", choices=["tc", "cc"], default=["tc", "cc"])
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=340)
    parser.add_argument("--warm", type=int, default=40, help="steps run first and not counted")
    args = parser.parse_args()
    if args.steps <= args.warm:
        raise SystemExit("--steps must exceed --warm")
    for view in args.views:
        print(json.dumps(tail(view, args.nodes, args.steps, args.warm)), flush=True)


if __name__ == "__main__":
    main()

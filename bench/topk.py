"""Benchmark: a global top-10 over 1M rows, old path (window_incremental) vs topk_incremental.

Both pipelines are compiled from the same view in one process: the old one with the
window_topk pass switched off, so ORDER BY ... LIMIT runs as a filter over the generic
incremental window (which re-sorts the whole partition, here the whole table, every
step). Both load the same 1M rows, then take the same change steps of 1,000 rows (half
inserts, half deletes of present rows, some of them among the current top rows) and
report the median, mean and max step time and the old/new ratio. The new path compacts
its pending changes into the sorted state once they pass n/32 rows: run enough steps
(the default 40 does) for the mean and max to include that.

    .venv/bin/python bench/topk.py [--rows 1000000] [--steps 40] [--old-steps 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dbspc.compiler.compile import Compiled, compile_sql
from dbspc.compiler.incremental import passes
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet

PROGRAM = """
CREATE TABLE t (id BIGINT, x INT, s STRING);
CREATE VIEW top10 AS SELECT id, x, s FROM t ORDER BY x DESC, id LIMIT 10;
"""
CHANGE = 1_000


def compile_old() -> Compiled:
    """The view as compiled before topk: the window_topk pass switched off."""
    saved = passes.LIFTED_PASSES
    passes.LIFTED_PASSES = tuple(p for p in saved if p.__name__ != "window_topk")
    try:
        return compile_sql(PROGRAM)
    finally:
        passes.LIFTED_PASSES = saved


def rows(ids: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "c0": ids.astype(np.int64),
            "c1": rng.integers(0, 10_000_000, len(ids)).astype(np.int32),
            "c2": pl.Series(rng.integers(0, 1000, len(ids))).cast(pl.String),
            WEIGHT: np.ones(len(ids), dtype=np.int64),
        }
    )


def changes(n: int, steps: int, seed: int) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """The initial rows and `steps` changes: CHANGE/2 inserts and CHANGE/2 deletes of
    present rows, of which 5 are among the current top 20 (so deletes promote rows)."""
    rng = np.random.default_rng(seed)
    live = rows(np.arange(n), rng)
    initial = live
    out = []
    next_id = n
    for _ in range(steps):
        top = live.sort(["c1", "c0"], descending=[True, False]).head(20)
        victims = pl.concat(
            [
                top.sample(5, seed=int(rng.integers(1 << 30))),
                live.sample(CHANGE // 2 - 5, seed=int(rng.integers(1 << 30))),
            ]
        ).unique()
        fresh = rows(np.arange(next_id, next_id + CHANGE // 2), rng)
        next_id += CHANGE // 2
        out.append(pl.concat([victims.with_columns(pl.lit(-1, dtype=pl.Int64).alias(WEIGHT)), fresh]))
        live = pl.concat([live.join(victims, on=["c0", "c1", "c2"], how="anti"), fresh])
    return initial, out


def run(compiled: Compiled, initial: pl.DataFrame, steps: list[pl.DataFrame]) -> tuple[list[float], list[ZSet]]:
    p = Pipeline(compiled)
    types = p.table_types("t")
    p.step({"t": ZSet.from_frame(initial, types)})
    times, outs = [], []
    for change in steps:
        t0 = time.perf_counter()
        out = p.step({"t": ZSet.from_frame(change, types)})
        times.append(time.perf_counter() - t0)
        outs.append(out["top10"])
    return times, outs


def summary(name: str, times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    median, mean = statistics.median(ms), statistics.mean(ms)
    return f"{name}: median {median:.1f} ms, mean {mean:.1f} ms, max {max(ms):.1f} ms ({len(ms)} steps)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--old-steps", type=int, default=10)
    args = ap.parse_args()
    initial, steps = changes(args.rows, args.steps, seed=11)
    new_times, new_outs = run(compile_sql(PROGRAM), initial, steps)
    old_times, old_outs = run(compile_old(), initial, steps[: args.old_steps])
    for a, b in zip(old_outs, new_outs, strict=False):
        assert a.to_rows() == b.to_rows(), "old and new paths disagree"
    print(f"global top-10 over {args.rows:,} rows, steps of {CHANGE:,} changed rows")
    print(summary("old (window_incremental + filter)", old_times))
    print(summary("new (topk_incremental)", new_times))
    print(
        f"ratio of medians: {statistics.median(old_times) / statistics.median(new_times):.0f}x; "
        f"of means: {statistics.mean(old_times) / statistics.mean(new_times):.0f}x"
    )


if __name__ == "__main__":
    main()

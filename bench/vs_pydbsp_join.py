"""dbspc against pydbsp on pydbsp's equi-join workload, the same rows and steps.

Workload: A(id, k, v) and B(id, k, v), N rows each, k uniform over [0, N/2) (about two rows
a key a side, so the join holds ~2N rows), v uniform over [0, 1,000,000). Each step changes
D rows of each table: D/2 deletions of present rows and D/2 new rows. The view is

    SELECT a.id AS aid, b.id AS bid, a.k, a.v AS av, b.v AS bv FROM a JOIN b ON a.k = b.k

pydbsp (bench/pydbsp_join.py, in bench/.venv-pydbsp) gets the very rows and steps, and its
steps are interleaved with dbspc's, so both see the same machine load. Its step time
excludes `Evaluator.compact()`, reported apart. After the last step both integrated joins
are compared with each other and with DuckDB's.

    .venv/bin/python bench/vs_pydbsp_join.py [--rows 100000] [--change 1000] [--steps 10] [--circuit 1d|2d]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

sys.path.append(str(Path(__file__).resolve().parent.parent))  # appended: a PYTHONPATH checkout wins

from bench.recursion import REPO, pydbsp_python
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet

PROGRAM = """
CREATE TABLE a (id BIGINT, k BIGINT, v BIGINT);
CREATE TABLE b (id BIGINT, k BIGINT, v BIGINT);
CREATE VIEW j AS SELECT a.id AS aid, b.id AS bid, a.k, a.v AS av, b.v AS bv FROM a JOIN b ON a.k = b.k;
"""
QUERY = "SELECT a.id, b.id, a.k, a.v, b.v FROM a JOIN b ON a.k = b.k"
OUT = ["aid", "bid", "k", "av", "bv"]


def table(ids: np.ndarray, rng: np.random.Generator, keys: int) -> pl.DataFrame:
    n = len(ids)
    return pl.DataFrame(
        {"id": ids, "k": rng.integers(0, keys, n), "v": rng.integers(0, 1_000_000, n)},
        schema={"id": pl.Int64, "k": pl.Int64, "v": pl.Int64},
    )


def change(live: pl.DataFrame, rng: np.random.Generator, d: int, next_id: int, keys: int) -> pl.DataFrame:
    """d/2 present rows with weight -1 and d - d/2 new rows with weight 1."""
    gone = live.sample(d // 2, seed=int(rng.integers(1 << 30))).with_columns(pl.lit(-1, pl.Int64).alias(WEIGHT))
    new = table(np.arange(next_id, next_id + d - d // 2), rng, keys).with_columns(pl.lit(1, pl.Int64).alias(WEIGHT))
    return pl.concat([gone, new])


def apply(live: pl.DataFrame, delta: pl.DataFrame) -> pl.DataFrame:
    gone = delta.filter(pl.col(WEIGHT) < 0).select("id")
    return pl.concat([live.join(gone, on="id", how="anti"), delta.filter(pl.col(WEIGHT) > 0).drop(WEIGHT)])


def shaped(frame: pl.DataFrame) -> pl.DataFrame:
    """The workload's rows in a Z-set's columns (c0.., w): built before the clock starts,
    as pydbsp's dictionaries are (a polars rename is a lazy query, 15 us warm and ~0.3 ms
    after the peer's step has left the caches cold)."""
    if WEIGHT not in frame.columns:
        frame = frame.with_columns(pl.lit(1, pl.Int64).alias(WEIGHT))
    return frame.rename({"id": "c0", "k": "c1", "v": "c2"})


def zset(p: Pipeline, name: str, frame: pl.DataFrame) -> ZSet:
    """A shaped frame adopted as the table's change (its schema checked): timed."""
    return ZSet.from_frame(frame, p.table_types(name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of each table")
    parser.add_argument("--change", type=int, default=1_000, help="rows changed per table per step")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--circuit", choices=["1d", "2d"], default="1d", help="pydbsp's circuit (see pydbsp_join.py)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    python, how = pydbsp_python()
    if python is None:
        sys.exit(f"pydbsp is not available: {how}")

    rng = np.random.default_rng(args.seed)
    keys = max(1, args.rows // 2)
    a, b = table(np.arange(args.rows), rng, keys), table(np.arange(args.rows, 2 * args.rows), rng, keys)
    next_id = 2 * args.rows
    steps = []
    live_a, live_b = a, b
    for _ in range(args.steps):
        da = change(live_a, rng, args.change, next_id, keys)
        db = change(live_b, rng, args.change, next_id + args.change, keys)
        next_id += 2 * args.change
        steps.append((da, db))
        live_a, live_b = apply(live_a, da), apply(live_b, db)

    scratch = Path(tempfile.mkdtemp(prefix="vs-pydbsp-"))
    workload = {"a": a.rows(), "b": b.rows(), "steps": [{"a": da.rows(), "b": db.rows()} for da, db in steps]}
    (scratch / "workload.json").write_text(json.dumps(workload))
    peer = subprocess.Popen(
        [python, str(REPO / "bench" / "pydbsp_join.py"), str(scratch / "workload.json"), str(scratch / "result.json"),
         "--circuit", args.circuit],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert peer.stdin is not None and peer.stdout is not None

    p = Pipeline.from_sql(PROGRAM)
    t = time.perf_counter()
    outputs = [p.step({"a": zset(p, "a", shaped(a)), "b": zset(p, "b", shaped(b))})["j"].frame]
    load = time.perf_counter() - t
    peer_load = json.loads(peer.stdout.readline())
    ours, theirs, gc = [], [], []
    for da, db in [(shaped(da), shaped(db)) for da, db in steps]:
        t = time.perf_counter()
        outputs.append(p.step({"a": zset(p, "a", da), "b": zset(p, "b", db)})["j"].frame)
        ours.append(time.perf_counter() - t)
        peer.stdin.write("step\n")
        peer.stdin.flush()
        line = json.loads(peer.stdout.readline())
        theirs.append(line["seconds"])
        gc.append(line["gc_s"])
    peer.stdin.write("done\n")
    peer.stdin.close()
    peer.wait(timeout=600)

    cols = [f"c{i}" for i in range(len(OUT))]
    integrated = (
        pl.concat(outputs)
        .group_by(cols)
        .agg(pl.col(WEIGHT).sum())
        .filter(pl.col(WEIGHT) != 0)
        .rename(dict(zip(cols, OUT, strict=True)))
    )
    con = duckdb.connect()
    con.register("a", live_a)
    con.register("b", live_b)
    expected = sorted(con.execute(QUERY).fetchall())
    mine = sorted(integrated.select(OUT).rows()) if integrated[WEIGHT].eq(1).all() else None
    peer_rows = json.loads((scratch / "result.json").read_text())["join"]
    peer_join = sorted(tuple(r[:5]) for r in peer_rows) if all(r[5] == 1 for r in peer_rows) else None

    ms = statistics.median(ours) * 1e3
    peer_ms = statistics.median(theirs) * 1e3
    print(f"command: .venv/bin/python bench/vs_pydbsp_join.py {' '.join(sys.argv[1:])}")
    print(
        f"A, B: {args.rows:,} rows each, keys over [0, {keys:,}); {args.steps} steps of {args.change:,} changed rows "
        f"a table (half deletions); join {len(expected):,} rows; pydbsp circuit {args.circuit} ({how})"
    )
    print()
    print("| system | load (s) | step median (ms) | step max (ms) | compact median (ms, not in step) |")
    print("|---|---:|---:|---:|---:|")
    print(f"| dbspc | {load:.2f} | {ms:.1f} | {max(ours) * 1e3:.1f} | |")
    print(
        f"| pydbsp | {peer_load['seconds']:.2f} | {peer_ms:.1f} | {max(theirs) * 1e3:.1f} "
        f"| {statistics.median(gc) * 1e3:.1f} |"
    )
    print()
    print(f"dbspc is {peer_ms / ms:.1f}x faster per step (target 100x)")
    print(f"dbspc's join equals DuckDB's: {mine == expected}; pydbsp's equals DuckDB's: {peer_join == expected}")


if __name__ == "__main__":
    main()

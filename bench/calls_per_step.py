"""Python-level calls a step makes: a before/after measure that machine load cannot move.

A 1k-row step's time is mostly fixed cost per call (a polars or numpy call of 10-50 us
around a compiled kernel), and on a shared machine the wall and CPU clocks move by 1.5x
between minutes. The number of calls does not. This runs each workload's steps under
cProfile and prints one JSON line per workload: per step, all Python function calls, and
the library calls among them (those dbspc's own code makes into polars, numpy, pyarrow
and its compiled kernels: the boundary crossings, each paying a fixed cost).

    for tree in ../before .; do PYTHONPATH=$tree .venv/bin/python bench/calls_per_step.py; done

Workloads: the join + GROUP BY view (bench/join_groupby.py's program, 1k-row changes of
half deletes over --orders rows), the transitive closure and connected components
views of bench/recursion.py at --nodes, and pydbsp's join (bench/vs_pydbsp_join.py,
--rows a table).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench import vs_pydbsp_join as vs
from bench.join_groupby import PROGRAM, customers_frame, orders_frame
from bench.recursion import make_workload, program
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet


def counted(steps: list[Callable[[], object]], warm: int = 3) -> dict[str, float]:
    """Calls per step over `steps` after the first `warm` (which fill the caches of
    compiled expressions and the like): all of them, and those from dbspc into a library."""
    for step in steps[:warm]:
        step()
    steps = steps[warm:]
    profile = cProfile.Profile()
    for step in steps:
        profile.enable()
        step()
        profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = library = 0
    for (filename, _, name), (_, calls, _, _, callers) in stats.items():
        total += calls
        if _ours(filename) or _PYTHON_OWN.match(name):
            continue
        library += sum(c[1] for (caller_file, _, _), c in callers.items() if _ours(caller_file))
    return {"calls": round(total / len(steps)), "library_calls": round(library / len(steps))}


# Python's own builtins and methods of its containers: not a library's boundary
_PYTHON_OWN = re.compile(
    r"<built-in method builtins\.|<method '\w+' of '(dict|list|tuple|str|set|frozenset|int|float|bytes|object"
    r"|_lsprof\.Profiler)' objects>"
)


def _ours(filename: str) -> bool:
    return "/dbspc/" in filename and "site-packages" not in filename


def join_groupby(orders: int, steps: int) -> list[Callable[[], object]]:
    rng = np.random.default_rng(7)
    p = Pipeline.from_sql(PROGRAM)
    live = orders_frame(np.arange(orders), rng)
    p.step({"customers": ZSet.from_frame(customers_frame(rng), p.table_types("customers"))})
    p.step({"orders": ZSet.from_frame(live, p.table_types("orders"))})
    for trace in [*p.executor.traces().values(), *p.tables.values()]:
        trace.settle()
    out: list[Callable[[], object]] = []
    for i in range(steps):
        gone = live.sample(500, seed=i)
        new = orders_frame(np.arange(orders + 500 * i, orders + 500 * (i + 1)), rng)
        live = pl.concat([live.join(gone.select("c0"), on="c0", how="anti"), new])
        z = ZSet.from_frame(
            pl.concat([gone.with_columns(pl.lit(-1, pl.Int64).alias(WEIGHT)), new]), p.table_types("orders")
        )
        out.append(lambda z=z: p.step({"orders": z}))
    return out


def pydbsp_join(rows: int, steps: int) -> list[Callable[[], object]]:
    """bench/vs_pydbsp_join.py's steps: 1k-row changes (half deletes) to both sides of an
    equi-join of two tables of `rows` rows, each change made a Z-set inside the step."""
    rng = np.random.default_rng(42)
    keys = max(1, rows // 2)
    a, b = vs.table(np.arange(rows), rng, keys), vs.table(np.arange(rows, 2 * rows), rng, keys)
    p = Pipeline.from_sql(vs.PROGRAM)
    p.step({"a": vs.zset(p, "a", vs.shaped(a)), "b": vs.zset(p, "b", vs.shaped(b))})
    out: list[Callable[[], object]] = []
    next_id = 2 * rows
    for _ in range(steps):
        da, db = vs.change(a, rng, 1_000, next_id, keys), vs.change(b, rng, 1_000, next_id + 1_000, keys)
        next_id += 2_000
        a, b = vs.apply(a, da), vs.apply(b, db)
        da, db = vs.shaped(da), vs.shaped(db)
        out.append(lambda da=da, db=db: p.step({"a": vs.zset(p, "a", da), "b": vs.zset(p, "b", db)}))
    return out


def recursion(view: str, nodes: int, steps: int) -> list[Callable[[], object]]:
    w = make_workload(nodes, 10, 1.5, steps, 100, 1)
    p = Pipeline.from_sql(program(view))
    types = p.table_types("edges")
    p.step({"edges": ZSet.from_frame(w.initial.with_columns(pl.lit(1, pl.Int64).alias("w")), types)})
    changes = [ZSet.from_frame(change, types) for change in w.steps]
    return [lambda z=z: p.step({"edges": z}) for z in changes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of each table of pydbsp's join")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    import dbspc

    tree = str(Path(dbspc.__file__).resolve().parent.parent)
    workloads = {
        "join_groupby": lambda: join_groupby(args.orders, args.steps),
        "tc": lambda: recursion("tc", args.nodes, args.steps),
        "cc": lambda: recursion("cc", args.nodes, args.steps),
        "pydbsp_join": lambda: pydbsp_join(args.rows, args.steps),
    }
    for name, make in workloads.items():
        print(json.dumps({"dbspc": tree, "workload": name, **counted(make())}), flush=True)


if __name__ == "__main__":
    main()

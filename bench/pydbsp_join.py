"""The pydbsp side of bench/vs_pydbsp_join.py: an incremental equi-join with pydbsp.

bench/vs_pydbsp_join.py runs this file as a subprocess with the Python of
bench/.venv-pydbsp (see bench/recursion.py, which creates it):

    bench/.venv-pydbsp/bin/python bench/pydbsp_join.py WORKLOAD.json RESULT.json --circuit 1d

WORKLOAD.json holds {"a": [[id, k, v], ...], "b": [...], "steps": [{"a": [[id, k, v, w], ...],
"b": [...]}, ...]}: the rows of both tables and each step's changes, the very rows of the
dbspc side. The driver loads both tables (step 0), then runs the next step for each line
`step` read on stdin, so the caller can interleave pydbsp's steps with its own, and prints
one JSON line {"step", "seconds", "gc_s", "rows"} after each. At the end it writes
RESULT.json: {"join": [[aid, bid, k, av, bv, weight], ...]}, the integrated join.

Two circuits, both pydbsp's own operators (`--circuit`):
- `1d`: the incremental join of DBSP §3 on the 1-D lattice, ΔA ⋈ z⁻¹(I B) + I(A) ⋈ ΔB, with
  `LiftIndex`, `Integrate`, `Delay`, `sort_merge_join` and `Lift2`;
- `2d`: pydbsp's `IndexedDeltaLiftedDeltaLiftedJoin` over streams lifted to the 2-D lattice
  (`LiftStreamIntroduction`, `LiftLiftIndex`), read at (step, 0).
After each step `Evaluator.compact()` evicts memoised values no later read needs; its time
is reported apart (gc_s), so the step time is pydbsp's most favourable figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from pydbsp.circuit import Circuit
from pydbsp.compute import ComputeCtx
from pydbsp.core import Antichain, dbsp_time
from pydbsp.evaluate import Evaluator
from pydbsp.indexed_relational_operators import (
    IndexedDeltaLiftedDeltaLiftedJoin,
    LiftIndex,
    LiftLiftIndex,
)
from pydbsp.indexed_zset import IndexedZSetAddition, sort_merge_join
from pydbsp.operator import Delay, Input, Integrate, Lift2, LiftStreamIntroduction
from pydbsp.storage import DictStorage
from pydbsp.zset import ZSet, ZSetAddition

Row = tuple[int, int, int]  # id, k, v
Out = tuple[int, int, int, int, int]  # a.id, b.id, k, a.v, b.v


def _key(row: Row) -> int:
    return row[1]


def _pair(k: int, a: Row, b: Row) -> Out:
    return (a[0], b[0], k, a[2], b[2])


class Join:
    """pydbsp's incremental join of A and B on k, and the integrated result."""

    def __init__(self, circuit: str) -> None:
        self.group: ZSetAddition[Any] = ZSetAddition()
        indexed: IndexedZSetAddition[int, Row] = IndexedZSetAddition(self.group, _key)
        lattice = dbsp_time(1 if circuit == "1d" else 2)
        self.e: Evaluator[Any] = Evaluator(
            circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=lattice), group=self.group
        )
        c = self.e.circuit
        self.a = Input(frontier=Antichain(dbsp_time(1))).connect(c, ())
        self.b = Input(frontier=Antichain(dbsp_time(1))).connect(c, ())
        if circuit == "1d":
            da = LiftIndex(indexer=_key).connect(c, (self.a,))
            db = LiftIndex(indexer=_key).connect(c, (self.b,))
            all_a = Integrate(group=indexed).connect(c, (da,))
            earlier_b = Delay(group=indexed).connect(c, (Integrate(group=indexed).connect(c, (db,)),))
            left = Lift2(op=lambda x, y: sort_merge_join(x, y, _pair)).connect(c, (da, earlier_b))
            right = Lift2(op=lambda x, y: sort_merge_join(x, y, _pair)).connect(c, (all_a, db))
            self.out = Lift2(op=self.group.add).connect(c, (left, right))
            self.at = lambda step: (step,)
        else:
            lifted_a = LiftLiftIndex(indexer=_key).connect(
                c, (LiftStreamIntroduction(group=self.group).connect(c, (self.a,)),)
            )
            lifted_b = LiftLiftIndex(indexer=_key).connect(
                c, (LiftStreamIntroduction(group=self.group).connect(c, (self.b,)),)
            )
            join = IndexedDeltaLiftedDeltaLiftedJoin(proj=_pair, group_a=indexed, group_b=indexed, out_group=self.group)
            self.out = join.connect(c, (lifted_a, lifted_b))
            self.at = lambda step: (step, 0)
        self.step_number = 0
        self.result: ZSet[Out] = self.group.identity()

    def step(self, da: dict[Row, int], db: dict[Row, int]) -> int:
        self.e.push(self.a, ZSet(da))
        self.e.push(self.b, ZSet(db))
        delta = self.e.read(self.out, self.at(self.step_number))
        self.result = self.group.add(self.result, delta)
        self.step_number += 1
        return len(delta.inner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload")
    parser.add_argument("result")
    parser.add_argument("--circuit", choices=["1d", "2d"], default="1d")
    args = parser.parse_args()
    with open(args.workload) as f:
        workload = json.load(f)
    j = Join(args.circuit)

    def timed(number: int, da: dict[Row, int], db: dict[Row, int]) -> None:
        t = time.perf_counter()
        rows = j.step(da, db)
        seconds = time.perf_counter() - t
        t = time.perf_counter()
        j.e.compact()
        gc = time.perf_counter() - t
        print(json.dumps({"step": number, "seconds": seconds, "gc_s": gc, "rows": rows}), flush=True)

    timed(0, {tuple(r): 1 for r in workload["a"]}, {tuple(r): 1 for r in workload["b"]})
    steps = workload["steps"]
    number = 0
    for line in sys.stdin:
        if line.strip() != "step" or number == len(steps):
            break
        change = steps[number]
        number += 1
        timed(number, {tuple(r[:3]): r[3] for r in change["a"]}, {tuple(r[:3]): r[3] for r in change["b"]})
    with open(args.result, "w") as f:
        json.dump({"join": sorted([*row, w] for row, w in j.result.inner.items())}, f)


if __name__ == "__main__":
    main()

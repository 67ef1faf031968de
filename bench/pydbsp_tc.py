"""The pydbsp side of bench/recursion.py: incremental transitive closure with pydbsp.

bench/recursion.py runs this file as a subprocess with the Python of bench/.venv-pydbsp
(pydbsp needs Python >= 3.12 and has no other dependencies):

    bench/.venv-pydbsp/bin/python bench/pydbsp_tc.py WORKLOAD.json RESULT.json

WORKLOAD.json holds {"initial": [[src, dst], ...], "steps": [[[src, dst, weight], ...], ...],
"check": [step, ...]}: the same graph and change steps as the dbspc side. The driver loads
the initial graph (step 0), then runs the next step for each line `step` read on stdin,
so that the caller can interleave pydbsp's steps with its own; after each step it prints
one JSON line {"step", "seconds", "gc_s", "iterations"}. At `done` or end of input it
writes RESULT.json: {"closure_size", "closure"}, where "closure" maps each checked step
to the integrated closure after it, as [[x, y, weight], ...]. By hand:

    yes step | head -20 | bench/.venv-pydbsp/bin/python bench/pydbsp_tc.py w.json r.json

The circuit is pydbsp's own `IndexedIncrementalReachabilityBody`: reach = edges ∪ reach ⋈
edges, with its doubly incremental (4-term) indexed join and its doubly incremental
distinct, on a 2-D lattice (outer step, inner iteration). As in pydbsp's tests, the
feedback is a 2-D state input that the driver fills with each iteration's output, and
`Evaluator.saturate_inner` runs the inner loop at least as deep as any earlier step went
(`min_inner`). After each step, `Evaluator.compact()` evicts memoised cells that no later
read needs; without it every (node, time) value stays in memory. Its time is reported
apart from the step time, which is therefore pydbsp's most favourable figure.
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
from pydbsp.indexed_relational_operators import IndexedIncrementalReachabilityBody
from pydbsp.operator import Input
from pydbsp.storage import DictStorage
from pydbsp.zset import ZSet, ZSetAddition

Edge = tuple[int, int]


class Reachability:
    """pydbsp's incremental reachability circuit and the state of its driver."""

    def __init__(self) -> None:
        self.group: ZSetAddition[Edge] = ZSetAddition()
        self.evaluator: Evaluator[Any] = Evaluator(
            circuit=Circuit(), storage=DictStorage(), ctx=ComputeCtx(lattice=dbsp_time(2)), group=self.group
        )
        circuit = self.evaluator.circuit
        self.edges = Input(frontier=Antichain(dbsp_time(1))).connect(circuit, ())
        self.state = Input(frontier=Antichain(dbsp_time(2))).connect(circuit, ())
        self.body = IndexedIncrementalReachabilityBody(edge_group=self.group).connect(circuit, (self.edges, self.state))
        self.outer = 0
        self.deepest = -1  # the deepest inner iteration any earlier outer step stored
        self.closure: ZSet[Edge] = self.group.identity()

    def step(self, change: dict[Edge, int]) -> int:
        """Apply one batch of edge changes; returns the inner iterations it evaluated,
        counting the last one, whose empty output ends the loop (as dbspc counts them)."""
        e = self.evaluator
        e.push(self.edges, ZSet(change))
        delta = self.group.identity()
        iterations = 0
        for k, diff in e.saturate_inner(self.body, self.outer, is_empty=lambda d: not d.inner, min_inner=self.deepest):
            e.push(self.state, diff, t=(self.outer, k))
            delta = self.group.add(delta, diff)
            iterations = k + 1
        self.deepest = max(self.deepest, iterations - 1)
        self.closure = self.group.add(self.closure, delta)
        self.outer += 1
        return iterations + 1

    def compact(self) -> None:
        self.evaluator.compact()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload")
    parser.add_argument("result")
    args = parser.parse_args()
    with open(args.workload) as f:
        workload = json.load(f)
    check = set(workload["check"])
    steps = workload["steps"]
    closures: dict[str, list[tuple[int, int, int]]] = {}

    def report(number: int, seconds: float, gc: float, iterations: int) -> None:
        if number in check:
            closures[str(number)] = sorted((x, y, w) for (x, y), w in r.closure.items())
        print(json.dumps({"step": number, "seconds": seconds, "gc_s": gc, "iterations": iterations}), flush=True)

    r = Reachability()
    t = time.perf_counter()
    iterations = r.step({(int(s), int(d)): 1 for s, d in workload["initial"]})
    seconds = time.perf_counter() - t
    t = time.perf_counter()
    r.compact()
    report(0, seconds, time.perf_counter() - t, iterations)

    # one step per "step" line on stdin, so the caller can interleave them with its own
    number = 0
    for line in sys.stdin:
        if line.strip() != "step" or number == len(steps):
            break
        number += 1
        change = {(int(s), int(d)): int(w) for s, d, w in steps[number - 1]}
        t = time.perf_counter()
        iterations = r.step(change)
        seconds = time.perf_counter() - t
        t = time.perf_counter()
        r.compact()
        report(number, seconds, time.perf_counter() - t, iterations)

    with open(args.result, "w") as f:
        json.dump({"closure_size": len(r.closure.inner), "closure": closures}, f)


if __name__ == "__main__":
    main()

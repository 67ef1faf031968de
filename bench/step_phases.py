"""Where a step's fixed cost goes: each phase's time and Python calls, per step.

A 1k-row step of the join + GROUP BY view costs ~1.5 ms, of which the arithmetic is a
small part; the rest is spread over many small calls. `calls_per_step.py` counts them for
the whole step. This splits the step into its phases, so that a change can be aimed at one:

  - `input check`: Pipeline's check of a table's change (consolidation, NOT NULL, the
    delete check's probe of the table's index);
  - `settle`: waiting for the merges the previous step left to the idle merger;
  - `%n kind`: the evaluation of operator n of the circuit (its dump's numbering);
  - `insert`: the integrals' and tables' inserts, at the commit;
  - `owe merges`: handing the small merges to the idle merger, after the outputs;
  - `other`: the rest (the executor's and pipeline's own loop, the outputs' consolidation).

Each phase's time is its own, without the phases inside it (an operator's inserts are
`insert`). Times come from one pass with only clocks around the phases; the calls from a
second pass over other steps of the same stream under a call counter (sys.setprofile),
which load cannot move but which slows the step several times. The times are means
over the middle half of the timed steps by wall time: a shared machine's outliers out.

    .venv/bin/python bench/step_phases.py [--workloads join_groupby tc] [--orders 1000000]
        [--nodes 20000] [--steps 60]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.calls_per_step import join_groupby, pydbsp_join, recursion
from dbspc.runtime import executor, pipeline, trace


class Phases:
    """A stack of the open phases; each phase's own time and calls are summed by name."""

    def __init__(self) -> None:
        self.stack: list[str] = ["other"]
        self.started: list[float] = [0.0]
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        now = time.perf_counter()
        self.seconds[self.stack[-1]] += now - self.started[-1]  # (the outer phase pauses)
        self.stack.append(name)
        self.started.append(now)
        try:
            yield
        finally:
            now = time.perf_counter()
            self.seconds[self.stack.pop()] += now - self.started.pop()
            self.started[-1] = now

    def count(self, frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            self.calls[self.stack[-1]] += 1


def instrument(phases: Phases) -> Callable[[], None]:
    """Wrap the phases' functions with `phases`; returns what undoes it."""
    undo: list[Callable[[], None]] = []

    def wrap(owner: Any, name: str, label: Callable[..., str]) -> None:
        original = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with phases.phase(label(*args)):
                return original(*args, **kwargs)

        setattr(owner, name, wrapped)
        undo.append(lambda: setattr(owner, name, original))

    wrap(pipeline, "checked", lambda *a: "input check")
    wrap(pipeline, "settle_owed", lambda *a: "settle")
    wrap(executor, "settle_owed", lambda *a: "settle")
    wrap(trace.Trace, "insert", lambda *a: "insert")
    wrap(trace.Trace, "_owe", lambda *a: "owe merges")

    def node(ex: executor.Executor, n: int, *rest: Any) -> str:
        return f"%{n} {ex.circuit[n].kind}"

    wrap(executor.Executor, "evaluate", node)

    def restore() -> None:
        for u in reversed(undo):
            u()

    return restore


def measure(steps: list[Callable[[], object]], warm: int = 5) -> tuple[float, dict[str, tuple[float, float]]]:
    """The trimmed mean step (ms), and per phase (ms a step, calls a step). The first
    `warm` steps fill caches; half of the rest run under clocks, and the phases' times
    are averaged over the middle half of those by wall time (a shared machine's
    outliers out); the other half run under the call counter."""
    for step in steps[:warm]:
        step()
    rest = steps[warm:]
    timed, counted = rest[: len(rest) // 2], rest[len(rest) // 2 :]
    phases = Phases()
    undo = instrument(phases)
    try:
        per_step: list[tuple[float, defaultdict[str, float]]] = []
        for step in timed:
            phases.seconds = defaultdict(float)
            t = phases.started[-1] = time.perf_counter()
            step()
            now = time.perf_counter()
            phases.seconds["other"] += now - phases.started[-1]
            per_step.append((now - t, phases.seconds))
        phases.seconds = defaultdict(float)  # (the counted steps' clocks are not kept)
        sys.setprofile(phases.count)
        try:
            for step in counted:
                step()
        finally:
            sys.setprofile(None)
    finally:
        undo()
    per_step.sort(key=lambda s: s[0])
    middle = per_step[len(per_step) // 4 : max(len(per_step) * 3 // 4, len(per_step) // 4 + 1)]
    seconds: defaultdict[str, float] = defaultdict(float)
    for _, phase_seconds in middle:
        for phase, spent in phase_seconds.items():
            seconds[phase] += spent
    names = sorted(set(seconds) | set(phases.calls), key=lambda k: -seconds[k])
    table = {k: (seconds[k] / len(middle) * 1e3, phases.calls[k] / len(counted)) for k in names}
    return sum(wall for wall, _ in middle) / len(middle) * 1e3, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", nargs="+", default=["join_groupby", "tc", "cc", "pydbsp_join"])
    parser.add_argument("--orders", type=int, default=1_000_000)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of each table of pydbsp's join")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    makers: dict[str, Callable[[], list[Callable[[], object]]]] = {
        "join_groupby": lambda: join_groupby(args.orders, args.steps),
        "tc": lambda: recursion("tc", args.nodes, args.steps),
        "cc": lambda: recursion("cc", args.nodes, args.steps),
        "pydbsp_join": lambda: pydbsp_join(args.rows, args.steps),
    }
    for name in args.workloads:
        mean, table = measure(makers[name]())
        total_ms = sum(ms for ms, _ in table.values())
        total_calls = sum(c for _, c in table.values())
        print(f"\n{name}: {mean:.2f} ms a step (the mean of the middle half by wall time)")
        print("| phase | ms a step | share | Python calls a step |")
        print("|---|---:|---:|---:|")
        for phase, (ms, calls) in table.items():
            print(f"| {phase} | {ms:.3f} | {ms / total_ms:.0%} | {calls:.0f} |")
        print(f"| total | {total_ms:.3f} | | {total_calls:.0f} |")


if __name__ == "__main__":
    main()

"""`dbspc explain`: per view, the operators it runs, the state each keeps, what a change
costs it, and a one-line verdict a reviewer (or a CI gate, with --strict) can act on.

An operator declares what its step cost grows with (`Cost.grows`): "change" (only the
change, and log of the state), "group" (the rows of each changed group or partition:
MIN/MAX, DISTINCT aggregates, windows) or "state" (it recomputes from its whole input or
state: a cross join, or any operator of a non-incremental circuit). A view's verdict is
its worst operator's; `--strict` fails on anything but "change"."""

from __future__ import annotations

import json
from dataclasses import dataclass

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import numbering, to_text
from dbspc.compiler.circuit.report import operator_cost

_RANK = {"change": 0, "group": 1, "state": 2}


@dataclass(frozen=True)
class OperatorCost:
    ref: str  # %i, as the circuit dump numbers it
    kind: str
    line: str  # the operator's line of the dump
    state: str
    time: str
    grows: str


@dataclass(frozen=True)
class ViewCost:
    name: str
    operators: tuple[OperatorCost, ...]

    @property
    def grows(self) -> str:
        return max((o.grows for o in self.operators), key=_RANK.__getitem__, default="change")

    @property
    def verdict(self) -> str:
        worst = [o for o in self.operators if o.grows == self.grows]
        o = worst[0] if worst else None
        if o is not None and self.grows == "state":
            return f"cost grows with the data: operator {o.ref} {o.kind}, {o.time}"
        if o is not None and self.grows == "group":
            return f"operator {o.ref} {o.kind} may re-read a changed group or partition whole: {o.time}"
        return "cost follows the change"


def view_costs(c: Circuit) -> list[ViewCost]:
    num = numbering(c)
    dump = {line.split(" = ", 1)[0]: line for line in to_text(c).splitlines() if line.startswith("%")}
    views = []
    for name, out in c.outputs().items():
        seen: set[int] = set()
        stack = [out]
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(c[n].inputs)
        ops = []
        for n in sorted(seen, key=num.__getitem__):
            cost = operator_cost(c, n)
            ref = f"%{num[n]}"
            ops.append(OperatorCost(ref, c[n].kind, dump.get(ref, ref), cost.state, cost.time, cost.grows))
        views.append(ViewCost(name, tuple(ops)))
    return views


def to_text_report(views: list[ViewCost]) -> str:
    lines = []
    for v in views:
        lines.append(f"view {v.name}: {v.verdict}")
        for o in v.operators:
            lines.append(f"  {o.line}")
            if o.state != "none" or o.grows != "change" or o.time != "O(C)":
                lines.append(f"      state: {o.state}; cost per change: {o.time}")
        lines.append("")
    return "\n".join(lines)


def to_json_report(views: list[ViewCost]) -> str:
    data = {
        "views": [
            {
                "name": v.name,
                "grows": v.grows,
                "verdict": v.verdict,
                "operators": [
                    {"id": o.ref, "kind": o.kind, "state": o.state, "cost": o.time, "grows": o.grows}
                    for o in v.operators
                ],
            }
            for v in views
        ]
    }
    return json.dumps(data, indent=1) + "\n"

"""The incrementality report: for each operator, the state it keeps and its cost per change.

C is the size of a step's change at the operator's input, R the size of the state it
probes (DBSP §4.5, Table of costs). A cross join is the one operator whose step cost
grows with its state, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.circuit import operators as op
from compiler.circuit.circuit import Circuit
from compiler.circuit.dump import numbering
from compiler.logical.aggregate import LINEAR_AGGREGATES


@dataclass(frozen=True, slots=True)
class Cost:
    state: str
    time: str


def operator_cost(c: Circuit, node: int) -> Cost:
    o = c[node]
    num = numbering(c)
    if isinstance(o, op.Integrate):
        key = ", ".join(f"#{k}" for k in o.key)
        return Cost(f"integral of %{num[o.inputs[0]]}, indexed by [{key}]", "O(C log R) to insert")
    if isinstance(o, op.Join):
        reads = [i for i in o.inputs if isinstance(c[i], op.Delay)]
        if not reads and c.incremental:
            return Cost("none", "O(C1 × C2): change ⋈ change")
        if not o.left_keys:
            return Cost(f"reads %{num[reads[0]]}" if reads else "none", "O(C × R): cross join probes all state")
        if reads:
            return Cost(f"reads %{num[reads[0]]}", "O(C log R + matches)")
        return Cost("none", "O(|left| + |right|): full join of snapshots")
    if isinstance(o, op.DistinctIncremental):
        return Cost(f"reads %{num[o.inputs[0]]}", "O(C log R)")
    if isinstance(o, op.AggregateIncremental):
        kinds = {a.fn for a in o.aggs}
        parts = ["emitted rows per group"]
        time = "O(C log R)"
        if kinds & set(LINEAR_AGGREGATES):
            parts.append("running sums per group")
        if kinds - set(LINEAR_AGGREGATES) or any(a.distinct for a in o.aggs):
            parts.append("value multiset per group (MIN/MAX/DISTINCT)")
            time = "O(C log R + size of changed groups)"
        return Cost(", ".join(parts), time)
    if isinstance(o, op.ScopeIncremental):
        inner = [b.kind for b in o.body if b.stateful]
        counts = ", ".join(f"{inner.count(k)} {k}" for k in sorted(set(inner)))
        return Cost(
            f"per-iteration traces of every earlier step ({counts}), indexed by key",
            "O(iterations × C log R): each inner iteration touches only the step's changes",
        )
    if isinstance(o, op.Scope):
        return Cost("none", "O(iterations × input): naive fixpoint from scratch")
    if isinstance(o, (op.Distinct, op.Aggregate)):
        return Cost("none", "O(input): recomputed from the snapshot")
    if isinstance(o, op.Delay):
        return Cost(f"previous value of %{num[o.inputs[0]]}", "O(1)")
    if o.linear or isinstance(o, op.Source):
        return Cost("none", "O(C)")
    return Cost("?", "?")


def to_report(c: Circuit) -> str:
    num = numbering(c)
    rows = []
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        cost = operator_cost(c, n)
        rows.append((f"%{i}", c[n].kind, cost.state, cost.time))
    widths = [max(len(r[k]) for r in rows) for k in range(3)]
    lines = ["-- incrementality report: state kept and cost per change (C = change size, R = state size)"]
    for r in rows:
        lines.append(f"-- {r[0].ljust(widths[0])}  {r[1].ljust(widths[1])}  {r[2].ljust(widths[2])}  {r[3]}")
    stateful = sum(1 for n in num if isinstance(c[n], op.Integrate | op.AggregateIncremental | op.ScopeIncremental))
    lines.append(f"-- {stateful} stateful operator(s)")
    return "\n".join(lines) + "\n"

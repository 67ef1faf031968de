"""The incrementality report: for each operator, the state it keeps and its cost per change.

C is the size of a step's change at the operator's input, R the size of the state it
probes (DBSP §4.5, Table of costs). Each operator class declares its own cost
(`Operator.cost`); a cross join is the one operator whose step cost grows with its
state, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import numbering
from dbspc.compiler.circuit.operators import Cost
from dbspc.compiler.types import SqlType


@dataclass(frozen=True, slots=True)
class _Where:
    """A CostContext over one circuit and its dump numbering."""

    circuit: Circuit
    num: dict[int, int]

    @property
    def incremental(self) -> bool:
        return self.circuit.incremental

    def ref(self, node: int) -> str:
        return f"%{self.num[node]}"

    def is_state(self, node: int) -> bool:
        return isinstance(self.circuit[node], op.Delay)

    def types_of(self, node: int) -> tuple[SqlType, ...]:
        return self.circuit[node].types


def operator_cost(c: Circuit, node: int) -> Cost:
    return c[node].cost(_Where(c, numbering(c)))


def to_report(c: Circuit) -> str:
    num = numbering(c)
    where = _Where(c, num)
    rows = []
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        cost = c[n].cost(where)
        rows.append((f"%{i}", c[n].kind, cost.state, cost.time))
    widths = [max((len(r[k]) for r in rows), default=0) for k in range(3)]
    lines = ["-- incrementality report: state kept and cost per change (C = change size, R = state size)"]
    for r in rows:
        lines.append(f"-- {r[0].ljust(widths[0])}  {r[1].ljust(widths[1])}  {r[2].ljust(widths[2])}  {r[3]}")
    stateful = sum(1 for n in num if c[n].stateful)
    lines.append(f"-- {stateful} stateful operator(s)")
    if c.incremental:
        # What a pipeline keeps of each table to check its deletes (runtime/pipeline.py).
        held = c.table_integrals()
        for table in sorted(c.sources()):
            if table in held:
                lines.append(f"-- table {table}: held once, as {where.ref(held[table])} (its delete checks probe it)")
            else:
                lines.append(f"-- table {table}: a whole-row index of its own for delete checks, O(C log R) to insert")
    return "\n".join(lines) + "\n"

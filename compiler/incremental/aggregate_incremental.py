"""(↑Agg ∘ G_p)^Δ: re-evaluate only the groups present in the change.

Grouping G_p is linear (§7.3), so it commutes with I; the aggregate over each group is
then made incremental as D ∘ ↑Agg ∘ I restricted to the keys of the change (§7.4).
COUNT, SUM and AVG keep one running sum per group (§7.2: they are linear); MIN and MAX
keep the group's value multiset, so deleting the current minimum is exact.

Before: %1 = aggregate(I(%0))
After:  %1 = I(aggregate_incremental(%0))

Runs as a test: tests/rules/aggregate_incremental.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.push_integral_linear import integrated_changes


def aggregate_incremental(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.Aggregate):
        return None
    return integrated_changes(c, o, lambda inner: op.AggregateIncremental(inner, o.types, o.group, o.aggs, o.is_global))

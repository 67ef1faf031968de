"""(↑topk)^Δ: per changed partition, the new first k rows minus the old ones.

topk is a window (a function of each partition's contents, grouped by the linear G_p of
§7.3), so as for an aggregate (§7.4) its incremental form is D ∘ ↑topk ∘ I restricted to
the partitions in the change: Δout = topk(P_old + ΔP) − topk(P_old). Unlike
window_incremental it keeps its own integral, sorted by (partition, ORDER BY keys, all
columns), so it reads only the rows that can be among the first k of a changed
partition, not the whole partition.

Before: %1 = topk(I(%0))
After:  %1 = I(topk_incremental(%0))

Runs as a test: tests/rules/topk_incremental.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.push_integral_linear import integrated_changes


def topk_incremental(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.TopK):
        return None
    return integrated_changes(c, o, lambda inner: op.TopKIncremental(inner, o.types, o.partition, o.order, o.limit))

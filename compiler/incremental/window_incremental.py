"""(↑window)^Δ: re-evaluate only the partitions present in the change.

A window function's value at a row is a function of the row's partition (PARTITION BY
is a grouping G_p, linear by §7.3), so like an aggregate (§7.4) the operator is
D ∘ ↑window ∘ I restricted to the partitions in the change: for each such partition P,
Δout = window(P_old + ΔP) − window(P_old), with P_old read from z⁻¹(I d) indexed by the
partition columns.

Before: %1 = window(I(%0))
After:  %1 = I(window_incremental(z⁻¹(I %0), %0))

Runs as a test: tests/rules/window_incremental.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.join_bilinear import delayed_integral
from dbspc.compiler.incremental.push_integral_linear import integrated_changes


def window_incremental(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.Window):
        return None

    def changes_of(inner: tuple[int, ...]) -> op.Operator:
        (d,) = inner  # the partition's old rows come from z⁻¹(I d), indexed by partition
        return op.WindowIncremental(
            (delayed_integral(c, d, o.partition), d), o.types, o.partition, o.order, o.calls, o.limit
        )

    return integrated_changes(c, o, changes_of)

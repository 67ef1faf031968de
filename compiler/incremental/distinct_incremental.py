"""(↑distinct)^Δ = ↑H(z⁻¹(I(d)), d) (Prop 4.7).

H looks only at the rows present in the change d, so a step costs O(|d| log |state|).

Before: %1 = distinct(I(%0))
After:  %1 = I(distinct_h(z⁻¹(I %0), %0))

Runs as a test: tests/rules/distinct_incremental.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.incrementalize import all_columns
from dbspc.compiler.incremental.join_bilinear import delayed_integral
from dbspc.compiler.incremental.push_integral_linear import integrated_inputs


def distinct_incremental(c: Circuit, o: op.Operator) -> int | None:
    """Also the positive part (EXCEPT ALL): any operator whose output weight at x is a
    function of its input's weight at x alone, with 0 ↦ 0, is incremental the same way."""
    form = o.pointwise_form
    if not isinstance(form, type):
        return None
    inner = integrated_inputs(c, o)
    if inner is None:
        return None
    (d,) = inner
    h = c.add(form((delayed_integral(c, d, all_columns(o.types)), d), o.types))
    return c.add(op.Integrate((h,), o.types, all_columns(o.types)))

"""Q(I(x)) ↦ I(Q(x)) for linear, time-invariant Q.

Law: Q ∘ I = I ∘ Q^Δ (Prop 3.2, push/pull), and Q^Δ = Q when Q is LTI (Thm 3.3).
For several inputs, Prop 3.2's add rule gives (a + b)^Δ = a^Δ + b^Δ.

Before: %1 = integrate(%0); %2 = filter[#0 > 2](%1)
After:  %1 = filter[#0 > 2](%0); %2 = integrate(%1)

Runs as a test: tests/rules/push_integral_through_linear.spec (the whole circuit before and after).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.incrementalize import all_columns


def integrated_inputs(c: Circuit, o: op.Operator) -> tuple[int, ...] | None:
    """The x_i of an operator whose inputs are all I(x_i), else None."""
    inner: list[int] = []
    for i in o.inputs:
        src = c[i]
        if not isinstance(src, op.Integrate):
            return None
        inner.append(src.inputs[0])
    return tuple(inner)


def integrated_changes(c: Circuit, o: op.Operator, changes_of: Callable[[tuple[int, ...]], op.Operator]) -> int | None:
    """o(I x_1, ..., I x_n) as I(changes_of(x_1, ..., x_n)), the shape every push rule
    produces; None when some input of `o` is not an integral."""
    inner = integrated_inputs(c, o)
    if inner is None:
        return None
    changes = c.add(changes_of(inner))
    return c.add(op.Integrate((changes,), o.types, all_columns(o.types)))


def push_integral_through_linear(c: Circuit, o: op.Operator) -> int | None:
    if not o.lifted_linear:
        return None
    return integrated_changes(c, o, lambda inner: dataclasses.replace(o, inputs=inner))

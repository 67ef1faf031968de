"""(a ⋈ b)^Δ for the bilinear join (Thm 3.4).

Law: (a × b)^Δ = a × b + z⁻¹(I(a)) × b + a × z⁻¹(I(b)).
The integrals are indexed by the join keys, so each term probes state in
O(|Δ| log |state|) (§4.5); identical integrals are shared by interning.

Before: %2 = join(I(%0), I(%1))
After:  %2 = I(join(%0, %1) + join(z⁻¹(I %0), %1) + join(%0, z⁻¹(I %1)))

Runs as a test: tests/rules/join_bilinear.spec (the whole circuit before and after).
"""

from __future__ import annotations

import dataclasses

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.incrementalize import all_columns
from dbspc.compiler.incremental.push_integral_linear import integrated_inputs


def delayed_integral(c: Circuit, node: int, key: tuple[int, ...]) -> int:
    """z⁻¹(I(node)), with the integral indexed by `key`."""
    types = c[node].types
    integral = c.add(op.Integrate((node,), types, key))
    return c.add(op.Delay((integral,), types))


def join_bilinear(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.Join):
        return None
    inner = integrated_inputs(c, o)
    if inner is None:
        return None
    a, b = inner
    terms = (
        c.add(dataclasses.replace(o, inputs=(a, b))),
        c.add(dataclasses.replace(o, inputs=(delayed_integral(c, a, o.left_keys), b))),
        c.add(dataclasses.replace(o, inputs=(a, delayed_integral(c, b, o.right_keys)))),
    )
    changes = c.add(op.Plus(terms, o.types))
    return c.add(op.Integrate((changes,), o.types, all_columns(o.types)))

"""D(I(x)) ↦ x (Thm 2.22: D ∘ I = id).

Once every integral has been pushed to the outputs, each view reads D(I(changes)).

Runs as a test: tests/rules/cancel_differentiate_integrate.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit


def cancel_differentiate_integrate(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.Differentiate):
        return None
    src = c[o.inputs[0]]
    if isinstance(src, op.Integrate):
        return src.inputs[0]
    return None

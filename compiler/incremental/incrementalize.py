"""Algorithm 4.8, step 4: Q^Δ = D ∘ Q ∘ I.

Every source now carries changes, so the circuit first integrates them (I) to rebuild
the tables Q expects, and differentiates (D) every view to emit changes. The rules that
follow push each I towards the outputs until it meets its D and cancels.

Runs as a test: tests/rules/incrementalize.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.rewrite import rebuild


def wrap_source(c: Circuit, o: op.Operator) -> int | None:
    """s ↦ I(Δs): a table is the integral of its changes (Def 3.1)."""
    if not isinstance(o, op.Source):
        return None
    changes = c.add(o)
    return c.add(op.Integrate((changes,), o.types, all_columns(o.types)))


def wrap_constant(c: Circuit, o: op.Operator) -> int | None:
    """c ↦ I(δ0(c)): a constant stream changes only at the first step (§5's δ0)."""
    if not isinstance(o, op.Constant):
        return None
    first = c.add(op.Delta0((c.add(o),), o.types))
    return c.add(op.Integrate((first,), o.types, all_columns(o.types)))


def wrap_output(c: Circuit, o: op.Operator) -> int | None:
    """v ↦ D(v): a view's change is the derivative of its contents (Def 3.1)."""
    if not isinstance(o, op.Output):
        return None
    diff = c.add(op.Differentiate(o.inputs, o.types))
    return c.add(op.Output((diff,), o.types, o.name))


def all_columns(types: tuple[object, ...]) -> tuple[int, ...]:
    return tuple(range(len(types)))


def incrementalize(circuit: Circuit) -> Circuit:
    return rebuild(circuit, (wrap_source, wrap_constant, wrap_output), incremental=True)

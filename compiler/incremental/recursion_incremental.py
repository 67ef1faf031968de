"""Recursion made incremental: the lifted scope becomes circuit (6.1).

Two steps of the paper meet here. The cycle rule (Prop 3.2) turns the naive loop into
semi-naive evaluation over inner changes, circuit (5.1); lifting the whole scope over the
outer clock (Prop 6.2) and incrementalizing again gives
ΔO = ↑∫(fix α.(↑(↑T)^Δ)^Δ(↑δ0(ΔI), ↑z⁻¹α)): linear operators stay as they are (Thm 3.3,
twice), joins become the 4-term nested join, distinct and aggregates their doubly
incremental versions, which read only what changed in the current outer step.

Before: %2 = scope[r](I(%0), I(%1)) { ... join ... distinct ... }
After:  %2 = I(scope_incremental[r](%0, %1) { ... join_nested ... distinct_nested ... })

Runs as a test: tests/rules/recursion_incremental.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.push_integral_linear import integrated_inputs


def recursion_incremental(c: Circuit, o: op.Operator) -> int | None:
    if not isinstance(o, op.Scope):
        return None
    inner = integrated_inputs(c, o)
    if inner is None:
        return None
    body = tuple(b.nested_incremental() for b in o.body)
    scope = c.add(op.ScopeIncremental(inner, (), body, o.results, o.names, o.max_level))
    return c.add(op.Integrate((scope,), (), ()))

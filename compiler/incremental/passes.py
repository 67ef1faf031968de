"""The passes, in order: the one place where their order is decided."""

from __future__ import annotations

from collections.abc import Callable

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.aggregate_incremental import aggregate_incremental
from dbspc.compiler.incremental.cancel_d_i import cancel_differentiate_integrate
from dbspc.compiler.incremental.check_incremental import check_incremental
from dbspc.compiler.incremental.consolidate_distinct import consolidate_distinct
from dbspc.compiler.incremental.distinct_incremental import distinct_incremental
from dbspc.compiler.incremental.incrementalize import incrementalize
from dbspc.compiler.incremental.join_bilinear import join_bilinear
from dbspc.compiler.incremental.push_integral_linear import push_integral_through_linear
from dbspc.compiler.incremental.recursion_incremental import recursion_incremental
from dbspc.compiler.incremental.rewrite import rebuild
from dbspc.compiler.incremental.topk_incremental import topk_incremental
from dbspc.compiler.incremental.window_incremental import window_incremental
from dbspc.compiler.incremental.window_topk import window_topk

# Rules that move an integral past one operator. Each applies to a disjoint set of
# operator kinds, so their order inside the tuple does not matter; a single bottom-up
# sweep pushes every I from the sources to the outputs.
PUSH_RULES = (
    push_integral_through_linear,
    join_bilinear,
    distinct_incremental,
    aggregate_incremental,
    window_incremental,
    topk_incremental,
    recursion_incremental,
    cancel_differentiate_integrate,
)


def push_integrals(circuit: Circuit) -> Circuit:
    return rebuild(circuit, PUSH_RULES)


def dead_code(circuit: Circuit) -> Circuit:
    """Drop nodes no output reads, such as the integrals the rules pushed past."""
    return rebuild(circuit, ())


Pass = Callable[[Circuit], Circuit]

# consolidate_distinct must run on the lifted circuit (before incrementalize): its
# positivity argument is about snapshots, not changes.
LIFTED_PASSES: tuple[Pass, ...] = (consolidate_distinct, window_topk)
INCREMENTAL_PASSES: tuple[Pass, ...] = (incrementalize, push_integrals, dead_code, check_incremental)


def optimize(circuit: Circuit, incremental: bool = True) -> Circuit:
    for p in LIFTED_PASSES:
        circuit = p(circuit)
    if incremental:
        for p in INCREMENTAL_PASSES:
            circuit = p(circuit)
    circuit.validate()
    return circuit


def explain(circuit: Circuit, incremental: bool = True) -> list[tuple[str, Circuit]]:
    """The circuit after every pass, named by the pass (the rule spec tests read it)."""
    steps = [("lower", circuit)]
    for p in LIFTED_PASSES + (INCREMENTAL_PASSES if incremental else ()):
        circuit = p(circuit)
        steps.append((p.__name__, circuit))
    return steps

"""The shared driver of rewrite rules: rebuild a circuit bottom-up.

A rule is a pure function `rule(circuit, op) -> node | None`. It sees `op` with its inputs
already rewritten (they are ids in the new `circuit`), and returns the id of what
replaces it, or None when it does not apply. The first rule that applies wins. Nodes no
output depends on are dropped on the way (dead-code elimination).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.operators import Operator

Rule = Callable[[Circuit, Operator], "int | None"]


def rebuild(
    circuit: Circuit,
    rules: Sequence[Rule],
    *,
    incremental: bool | None = None,
    bypass: frozenset[int] = frozenset(),
) -> Circuit:
    """Rewrite with `rules`; nodes in `bypass` are replaced by their first input."""
    new = Circuit(incremental=circuit.incremental if incremental is None else incremental)
    live = circuit.live()
    mapping: dict[int, int] = {}
    for node in circuit.topological_order():
        if node not in live:
            continue
        op = circuit[node]
        if node in bypass:
            mapping[node] = mapping[op.inputs[0]]
            continue
        op = dataclasses.replace(op, inputs=tuple(mapping[i] for i in op.inputs))
        for rule in rules:
            replaced = rule(new, op)
            if replaced is not None:
                mapping[node] = replaced
                break
        else:
            mapping[node] = new.add(op)
    return new

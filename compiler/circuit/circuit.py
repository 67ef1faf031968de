"""An explicit arena of operators; networkx is only a view of it.

Nodes are interned: adding an operator equal to an existing one returns the existing
id, which gives common-subexpression elimination for free (one integral per stream and
key, shared by every join that probes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from dbspc.compiler.circuit.operators import Delay, Integrate, Operator, Output, Source
from dbspc.compiler.errors import InternalCompilerError


@dataclass
class Circuit:
    nodes: list[Operator] = field(default_factory=list)
    _ids: dict[Operator, int] = field(default_factory=dict)
    incremental: bool = False

    def add(self, op: Operator) -> int:
        existing = self._ids.get(op)
        if existing is not None:
            return existing
        for i in op.inputs:
            if not 0 <= i < len(self.nodes):
                raise InternalCompilerError(f"{op.kind} refers to missing node {i}")
        self.nodes.append(op)
        self._ids[op] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def __getitem__(self, node: int) -> Operator:
        return self.nodes[node]

    def sources(self) -> dict[str, int]:
        return {op.name: i for i, op in enumerate(self.nodes) if isinstance(op, Source)}

    def outputs(self) -> dict[str, int]:
        return {op.name: i for i, op in enumerate(self.nodes) if isinstance(op, Output)}

    def graph(self) -> nx.MultiDiGraph:
        """Edges go from producer to consumer; `port` is the input position."""
        g = nx.MultiDiGraph()
        for i, op in enumerate(self.nodes):
            g.add_node(i, op=op)
        for i, op in enumerate(self.nodes):
            for port, src in enumerate(op.inputs):
                g.add_edge(src, i, port=port)
        return g

    def consumers(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {i: [] for i in range(len(self.nodes))}
        for i, op in enumerate(self.nodes):
            for src in op.inputs:
                out[src].append(i)
        return out

    def topological_order(self) -> list[int]:
        """Deterministic: ties broken by node id."""
        return list(nx.lexicographical_topological_sort(self.graph()))

    def live(self) -> set[int]:
        """Nodes an output depends on."""
        seen: set[int] = set()
        stack = list(self.outputs().values())
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(self.nodes[n].inputs)
        return seen

    def validate(self) -> None:
        """Every cycle passes through z⁻¹ (DBSP Cor 2.12), and inputs are well typed."""
        g = self.graph()
        strict_free = g.subgraph([n for n in g.nodes if not isinstance(self.nodes[n], Delay)])
        try:
            cycle = nx.find_cycle(strict_free)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            raise InternalCompilerError(f"cycle without a delay: {cycle}")
        for i, op in enumerate(self.nodes):
            if isinstance(op, Delay) and len(op.inputs) != 1:
                raise InternalCompilerError(f"delay %{i} needs one input")
            if isinstance(op, Integrate) and any(k >= len(op.types) for k in op.key):
                raise InternalCompilerError(f"integrate %{i} keys a missing column")


def body_order(body: tuple[Operator, ...]) -> list[int]:
    """Deterministic topological order of a scope's body (ties broken by node id).

    z⁻¹ reads the previous iteration, so its input edge does not order an iteration;
    every cycle of the body must pass through one (Cor 2.12), else this raises.
    """
    g = nx.DiGraph()
    g.add_nodes_from(range(len(body)))
    for n, o in enumerate(body):
        if not isinstance(o, Delay):
            g.add_edges_from((s, n) for s in o.inputs)
    try:
        return list(nx.lexicographical_topological_sort(g))
    except nx.NetworkXUnfeasible:
        raise InternalCompilerError("a scope has a cycle without a delay") from None

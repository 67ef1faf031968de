"""An explicit arena of operators; networkx is only a view of it.

Nodes are interned: adding an operator equal to an existing one returns the existing
id, which gives common-subexpression elimination for free (one integral per stream and
key, shared by every join that probes it).

The orders are computed here rather than by networkx: importing networkx costs ~0.3 s,
a third of `dbspc compile`'s wall time, and a compile needs only a topological sort.
networkx is imported where its algorithms earn it (the graph view, a cycle's report).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dbspc.compiler.circuit.operators import Delay, Integrate, Operator, Output, Source
from dbspc.compiler.errors import InternalCompilerError

if TYPE_CHECKING:
    import networkx as nx


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

    def table_integrals(self) -> dict[str, int]:
        """Per table, the first live integral straight over its source with all its
        columns (a Δ ⋈ I join's integral of the table): the table's whole contents,
        indexed by the integral's key, which a pipeline's delete checks read instead of
        a copy of the table of their own."""
        live = self.live()
        out: dict[str, int] = {}
        for n, op in enumerate(self.nodes):
            source = self.nodes[op.inputs[0]] if isinstance(op, Integrate) and n in live else None
            if isinstance(source, Source) and op.types == source.types:
                out.setdefault(source.name, n)
        return out

    def graph(self) -> nx.MultiDiGraph:
        """Edges go from producer to consumer; `port` is the input position."""
        import networkx as nx

        g = nx.MultiDiGraph()
        for i, op in enumerate(self.nodes):
            g.add_node(i, op=op)
        for i, op in enumerate(self.nodes):
            for port, src in enumerate(op.inputs):
                g.add_edge(src, i, port=port)
        return g

    def consumers(self) -> dict[int, list[int]]:
        return consumers_of(self.nodes)

    def topological_order(self) -> list[int]:
        """Deterministic: ties broken by node id."""
        order = lexicographic_order(len(self.nodes), [op.inputs for op in self.nodes])
        if order is None:
            raise InternalCompilerError(f"cycle: {self._cycle(lambda n: True)}")
        return order

    def _cycle(self, keep: Callable[[int], bool]) -> list[tuple[int, int]]:
        """A cycle among the nodes `keep` accepts, for an error message."""
        import networkx as nx

        g = self.graph()
        return [(u, v) for u, v, *_ in nx.find_cycle(g.subgraph([n for n in g.nodes if keep(n)]))]

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
        strict = [() if isinstance(op, Delay) else op.inputs for op in self.nodes]
        if lexicographic_order(len(self.nodes), strict) is None:
            cycle = self._cycle(lambda n: not isinstance(self.nodes[n], Delay))
            raise InternalCompilerError(f"cycle without a delay: {cycle}")
        for i, op in enumerate(self.nodes):
            if isinstance(op, Delay) and len(op.inputs) != 1:
                raise InternalCompilerError(f"delay %{i} needs one input")
            if isinstance(op, Integrate) and any(k >= len(op.types) for k in op.key):
                raise InternalCompilerError(f"integrate %{i} keys a missing column")


def consumers_of(nodes: Sequence[Operator]) -> dict[int, list[int]]:
    """Each node's readers, by id (a circuit's nodes, or a scope's body)."""
    out: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, op in enumerate(nodes):
        for src in op.inputs:
            out[src].append(i)
    return out


def body_order(body: tuple[Operator, ...]) -> list[int]:
    """Deterministic topological order of a scope's body (ties broken by node id).

    z⁻¹ reads the previous iteration, so its input edge does not order an iteration;
    every cycle of the body must pass through one (Cor 2.12), else this raises.
    """
    order = lexicographic_order(len(body), [() if isinstance(o, Delay) else o.inputs for o in body])
    if order is None:
        raise InternalCompilerError("a scope has a cycle without a delay")
    return order


def lexicographic_order(n: int, inputs: Sequence[Iterable[int]]) -> list[int] | None:
    """Nodes 0..n-1 in topological order, node `i` after each of `inputs[i]`, the smallest
    ready id first (networkx's lexicographical_topological_sort); None if there is a cycle.
    Kahn's algorithm with a heap of ready nodes: O(E + V log V)."""
    waiting = [0] * n
    consumers: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for src in inputs[i]:
            waiting[i] += 1
            consumers[src].append(i)
    ready = [i for i in range(n) if not waiting[i]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for c in consumers[node]:
            waiting[c] -= 1
            if not waiting[c]:
                heapq.heappush(ready, c)
    return order if len(order) == n else None

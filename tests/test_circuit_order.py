"""The circuit's own topological orders against networkx's, which they replace.

Goldens and dumps depend on the order being exactly networkx's lexicographical
topological sort (smallest ready node id first), so the two are compared on random
graphs, cycles included.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.circuit.circuit import Circuit, body_order, lexicographic_order
from dbspc.compiler.circuit.operators import Delay
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import InternalCompilerError


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[list[int]]]:
    n = draw(st.integers(0, 12))
    inputs = [draw(st.lists(st.integers(0, n - 1), max_size=3)) if n else [] for _ in range(n)]
    return n, inputs


def networkx_order(n: int, inputs: list[list[int]]) -> list[int] | None:
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((src, i) for i in range(n) for src in inputs[i])
    try:
        return list(nx.lexicographical_topological_sort(g))
    except nx.NetworkXUnfeasible:
        return None


@settings(max_examples=400, deadline=None)
@given(graphs())
def test_same_order_as_networkx(graph: tuple[int, list[list[int]]]) -> None:
    n, inputs = graph
    assert lexicographic_order(n, inputs) == networkx_order(n, inputs)


def test_smallest_ready_node_first() -> None:
    # 0 and 2 are ready at once; 0 goes first, which readies 1, and 1 < 2 goes next
    assert lexicographic_order(4, [[], [0], [], [1, 2]]) == [0, 1, 2, 3]
    assert lexicographic_order(3, [[2], [], []]) == [1, 2, 0]
    # a node read twice (a self-join) waits for both edges
    assert lexicographic_order(2, [[1, 1], []]) == [1, 0]


def test_cycle_is_none() -> None:
    assert lexicographic_order(2, [[1], [0]]) is None
    assert lexicographic_order(1, [[0]]) is None


def test_recursive_view_orders_and_validates() -> None:
    sql = """
    CREATE TABLE edge (src INT, dst INT);
    CREATE VIEW tc AS WITH RECURSIVE r(src, dst) AS (
      SELECT src, dst FROM edge UNION SELECT r.src, e.dst FROM r JOIN edge e ON r.dst = e.src)
    SELECT * FROM r;
    """
    circuit = compile_sql(sql, "spark", True).circuit
    order = circuit.topological_order()
    assert order == networkx_order(len(circuit.nodes), [list(op.inputs) for op in circuit.nodes])
    circuit.validate()


def test_cycle_without_delay_is_reported() -> None:
    c = Circuit()
    body = (Delay(inputs=(1,), types=()), Delay(inputs=(0,), types=()))
    with pytest.raises(InternalCompilerError, match="cycle without a delay"):
        body_order(tuple(_strict(op) for op in body))
    assert body_order(body) == [0, 1]  # both edges enter a z⁻¹: no order constraint
    assert c.topological_order() == []


def _strict(op: Delay) -> Any:
    """A stand-in operator with the delay's inputs that is not a delay."""

    class Plain:
        inputs = op.inputs

    return Plain()

"""Drop a distinct that a later distinct makes redundant (Algorithm 4.8, step 2).

Law (Prop 4.6): for Q in {σ, π, map, +, ⋈, ×} and a positive input i,
distinct(Q(distinct(i))) = distinct(Q(i)). Compositions of such Q qualify too. The inner
distinct is removed only when nothing else reads it or the operators between, and
every input along the way is positive (for + and ⋈ the other inputs too).

Before: %1 = distinct(%0); %2 = map[#0](%1); %3 = distinct(%2)
After:  %2 = map[#0](%0); %3 = distinct(%2)

Runs as a test: tests/rules/consolidate_distinct.spec (the whole circuit before and after).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.incremental.positivity import positive_nodes
from dbspc.compiler.incremental.rewrite import rebuild


def redundant_distincts(c: Circuit) -> set[int]:
    consumers = c.consumers()
    positive = positive_nodes(c)
    redundant: set[int] = set()
    for n, o in enumerate(c.nodes):
        if not isinstance(o, op.Distinct) or o.inputs[0] not in positive:
            continue
        node = n
        while len(consumers[node]) == 1:
            up = consumers[node][0]
            if isinstance(c[up], op.Distinct):
                redundant.add(n)
                break
            if not c[up].distinct_transparent or not all(i in positive for i in c[up].inputs):
                break
            node = up
    return redundant


def consolidate_distinct(circuit: Circuit) -> Circuit:
    return rebuild(circuit, (), bypass=frozenset(redundant_distincts(circuit)))

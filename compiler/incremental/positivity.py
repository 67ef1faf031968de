"""Which streams hold only positive Z-sets (bags), needed before distinct rewrites.

Props 4.5/4.6 hold only for positive inputs. Tables are bags, hence positive; each
operator declares whether it keeps positivity (`keeps_positive`: map, filter, +, ⋈) or
produces a positive result whatever its input (`always_positive`: tables, distinct,
aggregates, and a scope's results, which are fixpoints of positive bodies).
"""

from __future__ import annotations

from dbspc.compiler.circuit.circuit import Circuit


def positive_nodes(c: Circuit) -> set[int]:
    positive: set[int] = set()
    for n in c.topological_order():
        o = c[n]
        if o.always_positive or (o.keeps_positive and all(i in positive for i in o.inputs)):
            positive.add(n)
    return positive

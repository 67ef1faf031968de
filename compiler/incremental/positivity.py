"""Which streams hold only positive Z-sets (bags), needed before distinct rewrites.

Props 4.5/4.6 hold only for positive inputs. Tables are bags, hence positive; linear
operators other than negation, joins, distinct and aggregates keep positivity.
"""

from __future__ import annotations

from compiler.circuit import operators as op
from compiler.circuit.circuit import Circuit

_KEEPS_POSITIVE = (op.Map, op.Filter, op.Plus, op.Join, op.Output)
# A scope's results are fixpoints of positive bodies: sets (UNION) or bags (UNION ALL).
_ALWAYS_POSITIVE = (op.Source, op.Distinct, op.Aggregate, op.ScopeOutput)


def positive_nodes(c: Circuit) -> set[int]:
    positive: set[int] = set()
    for n in c.topological_order():
        o = c[n]
        if isinstance(o, _ALWAYS_POSITIVE) or (isinstance(o, _KEEPS_POSITIVE) and all(i in positive for i in o.inputs)):
            positive.add(n)
    return positive

"""Recognise top-k: a Window computing only ROW_NUMBER whose every reader keeps rn <= k.

Law: σ_{rn ≤ k}(window_rn(x)) = σ_{rn ≤ k}(topk_k(x)), where topk_k keeps the rows of
window_rn(x) numbered <= k in their partition: the filter drops every other row anyway.
So when each reader of the window (through maps that pass rn on as a plain column)
filters on rn <= k_i (or rn < k_i + 1, rn = k_i), the window is topk with limit
max k_i. ORDER BY ... LIMIT binds to such a window with its limit already set. The
incremental form of topk then reads only the first k rows of a changed partition
(compiler/incremental/topk_incremental.py) instead of re-sorting the whole partition.

Before: %1 = window[partition=[#0] order=[#1] row_number()](%0); %2 = filter[(#2 <= 3)](%1)
After:  %1 = topk[partition=[#0] order=[#1] limit=3](%0); %2 = filter[(#2 <= 3)](%1)

Runs as a test: tests/rules/window_topk.spec (the whole circuit before and after).
"""

from __future__ import annotations

import dataclasses

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar


def _conjuncts(p: Scalar) -> list[Scalar]:
    if isinstance(p, Call) and p.fn == "and":
        return [c for a in p.args for c in _conjuncts(a)]
    return [p]


def _bound_of(pred: Scalar, cols: set[int]) -> int | None:
    """The least k such that `pred` implies rn <= k (rn any column of `cols`), if any."""
    best: int | None = None
    for c in _conjuncts(pred):
        if not isinstance(c, Call) or len(c.args) != 2:
            continue
        a, b = c.args
        fn = c.fn
        if isinstance(a, Lit) and isinstance(b, Col):  # k >= rn is rn <= k
            a, b = b, a
            fn = {"ge": "le", "gt": "lt", "eq": "eq"}.get(fn, "")
        if not (isinstance(a, Col) and a.index in cols and isinstance(b, Lit)):
            continue
        if not isinstance(b.value, int) or isinstance(b.value, bool):
            continue
        k = {"le": b.value, "lt": b.value - 1, "eq": b.value}.get(fn)
        if k is not None:
            best = k if best is None else min(best, k)
    return best


def _reader_bound(c: Circuit, consumers: dict[int, list[int]], node: int, cols: set[int]) -> int | None:
    """A bound k on rn that every path from `node` (rn at `cols`) applies, or None."""
    readers = consumers[node]
    if not readers:
        return None
    bounds: list[int] = []
    for r in readers:
        o = c[r]
        if isinstance(o, op.Filter):
            k = _bound_of(o.predicate, cols)
        elif isinstance(o, op.Map):
            # rn must only be passed on as a plain column (computing with it is a use
            # of the rows the top-k would drop)
            passed = {j for j, e in enumerate(o.exprs) if isinstance(e, Col) and e.index in cols}
            if any(_reads(e, cols) for j, e in enumerate(o.exprs) if j not in passed):
                return None
            k = _reader_bound(c, consumers, r, passed) if passed else None
        else:
            k = None
        if k is None:
            return None
        bounds.append(k)
    return max(bounds)


def _reads(e: Scalar, cols: set[int]) -> bool:
    if isinstance(e, Col):
        return e.index in cols
    if isinstance(e, Call):
        return any(_reads(a, cols) for a in e.args)
    return False


def topk_limits(c: Circuit) -> dict[int, int]:
    """Window nodes that are top-k, with their limit."""
    consumers = c.consumers()
    found: dict[int, int] = {}
    for n, o in enumerate(c.nodes):
        if not isinstance(o, op.Window) or len(o.calls) != 1 or o.calls[0].fn != "row_number" or not o.order:
            continue
        bound = _reader_bound(c, consumers, n, {len(o.types) - 1})
        limits = [x for x in (o.limit, bound) if x is not None]
        if limits:
            found[n] = max(0, min(limits))
    return found


def window_topk(circuit: Circuit) -> Circuit:
    limits = topk_limits(circuit)
    if not limits:
        return circuit
    new = Circuit(incremental=circuit.incremental)
    mapping: dict[int, int] = {}
    for node in circuit.topological_order():
        o = dataclasses.replace(circuit[node], inputs=tuple(mapping[i] for i in circuit[node].inputs))
        if node in limits:
            assert isinstance(o, op.Window)
            o = op.TopK(o.inputs, o.types, o.partition, o.order, limits[node])
        mapping[node] = new.add(o)
    return new

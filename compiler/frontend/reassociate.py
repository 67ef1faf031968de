"""Spark's ReorderAssociativeOperator: a chain of integer `+` (or `*`) with constants in
it is computed as the sum of its other operands, in their order, plus the constants'
sum, folded into one constant while the query is planned. So `i + 2147483647 + j` is `(i + j) + 2147483647`:
for i = 1 and j = -1 it is 2147483647 in Spark, where adding left to right overflows;
and the order decides which operands a NULL one skips (runtime/expressions.py).

Spark's dialects only: the others add left to right, as written.
"""

from __future__ import annotations

from typing import TypeGuard

from dbspc.compiler.logical.scalar import Call, Lit, Scalar, reads_no_column
from dbspc.compiler.types import INTEGER_BOUNDS

_CHAINS = ("add", "mul")


def reassociated(e: Scalar) -> Scalar:
    """`e` reordered as Spark's optimizer reorders it; `e` itself if nothing moves.

    Binding is bottom-up and reorders every chain it builds, so a chain below `e` already
    has its constants last: whether `e` has any is seen at its operands, without walking
    the chain (a generated chain of thousands of terms binds in linear time)."""
    if not isinstance(e, Call) or e.fn not in _CHAINS or not e.type.is_integer or not _has_constant(e):
        return e
    constants: list[Scalar] = []
    others: list[Scalar] = []
    for x in _flatten(e):
        (constants if reads_no_column(x) else others).append(x)
    folded = _folded(constants, e)
    if not others:
        return folded
    out = Call(e.type, e.fn, (_chain(others, e), folded))
    return e if out == e else out


def _same_chain(x: Scalar, e: Call) -> TypeGuard[Call]:
    return isinstance(x, Call) and x.fn == e.fn and x.type == e.type


def _has_constant(e: Call) -> bool:
    return any(reads_no_column(a.args[1]) if _same_chain(a, e) else reads_no_column(a) for a in e.args)


def _flatten(e: Call) -> list[Scalar]:
    """The operands of the chain of `e`'s function, in order (`(a + b) + c`: a, b, c)."""
    out: list[Scalar] = []
    stack: list[Scalar] = [e]
    while stack:
        x = stack.pop()
        if _same_chain(x, e):
            stack.extend(reversed(x.args))
        else:
            out.append(x)
    return out


def _chain(parts: list[Scalar], like: Call) -> Scalar:
    out = parts[0]
    for p in parts[1:]:
        out = Call(like.type, like.fn, (out, p))
    return out


def _folded(constants: list[Scalar], like: Call) -> Scalar:
    """The constants' sum (or product) as one literal, as Spark folds it while planning; a
    chain of them where it overflows (Spark fails the query: compiler/frontend/failing_constants.py)
    or where a constant is not a plain integer."""
    values = [c.value for c in constants if isinstance(c, Lit)]
    if len(values) == len(constants) and all(type(v) is int for v in values):
        total = values[0]
        for v in values[1:]:
            total = total + v if like.fn == "add" else total * v
        low, high = INTEGER_BOUNDS[like.type.kind]
        if low <= total <= high:
            return Lit(like.type, total)
    return _chain(constants, like)


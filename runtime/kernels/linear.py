"""Linear operators of DBSP: map, filter, plus, negate.

A linear operator Q satisfies Q(a + b) = Q(a) + Q(b), so it is its own incremental
version (DBSP Thm 3.3): applied to a change batch it yields the change of its output.
None of them keeps state; all work on whole columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.logical.scalar import Col, Scalar
from dbspc.compiler.types import SqlType
from dbspc.runtime.expressions import evaluate, evaluate_predicate
from dbspc.runtime.registry import Context, Value, as_zset, evaluates
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, pick


def map_rows(batch: ZSet, exprs: Sequence[Scalar], out_types: Sequence[SqlType], what: str) -> ZSet:
    """Projection: each row becomes the row of `exprs`, with the same weight.

    The result is NOT consolidated: distinct input rows may map to equal output rows
    (their weights are not merged here); consumers that need a consolidated batch
    (distinct, aggregates, view outputs) consolidate it themselves.
    """
    if len(batch) == 0:
        return ZSet.empty(out_types)
    if all(isinstance(e, Col) for e in exprs):
        # a pure projection: the columns themselves, without a polars query (~0.3 ms)
        names = [col_name(e.index) for e in exprs if isinstance(e, Col)]
        frame = pick(batch.frame, [*names, WEIGHT], [*(col_name(i) for i in range(len(names))), WEIGHT])
    else:
        frame = evaluate(batch.frame, exprs, what)
    return ZSet.from_frame(frame, out_types)


def filter_rows(batch: ZSet, predicate: Scalar, what: str) -> ZSet:
    """Selection: keep the rows where `predicate` is TRUE (NULL and FALSE drop).

    A consolidated input gives a consolidated output.
    """
    if len(batch) == 0:
        return batch
    return ZSet(evaluate_predicate(batch.frame, predicate, what), batch.types, batch.consolidated)


def plus(parts: Sequence[ZSet], types: Sequence[SqlType]) -> ZSet:
    """The Z-set sum of the batches, consolidated."""
    return ZSet.concat(parts, types).consolidate()


def negate(batch: ZSet) -> ZSet:
    """The Z-set negation; consolidated whenever the input is."""
    return batch.negate()


# -- evaluators ---------------------------------------------------------------------------


@evaluates(op.Map)
def _map(ctx: Context, o: op.Map, args: list[Value]) -> Value:
    return map_rows(as_zset(args[0]), o.exprs, o.types, ctx.what)


@evaluates(op.Filter)
def _filter(ctx: Context, o: op.Filter, args: list[Value]) -> Value:
    return filter_rows(as_zset(args[0]), o.predicate, ctx.what)


@evaluates(op.Plus)
def _plus(ctx: Context, o: op.Plus, args: list[Value]) -> Value:
    if ctx.loose:  # (its readers sum equal rows themselves)
        return ZSet.concat([as_zset(a) for a in args], o.types)
    return plus([as_zset(a) for a in args], o.types)


@evaluates(op.Negate)
def _negate(ctx: Context, o: op.Negate, args: list[Value]) -> Value:
    return negate(as_zset(args[0]))

"""Linear operators of DBSP: map, filter, plus, negate.

A linear operator Q satisfies Q(a + b) = Q(a) + Q(b), so it is its own incremental
version (DBSP Thm 3.3): applied to a change batch it yields the change of its output.
None of them keeps state; all work on whole columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.logical.scalar import Col, Lit, Scalar
from dbspc.compiler.types import SqlType
from dbspc.runtime.expressions import evaluate, evaluate_predicate
from dbspc.runtime.registry import Context, Value, as_zset, evaluates
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, frame_of, pick, polars_dtype


def map_rows(
    batch: ZSet, exprs: Sequence[Scalar], out_types: Sequence[SqlType], what: str, eager: bool = False
) -> ZSet:
    """Projection: each row becomes the row of `exprs`, with the same weight (`eager`:
    Semantics.eager_operands).

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
    elif columns_and_nulls(exprs):
        # columns and NULLs (an outer join's padding): no query either
        frame = frame_of(
            [
                batch.frame.get_column(col_name(e.index)).alias(col_name(i))
                if isinstance(e, Col)
                else _nulls(col_name(i), t, len(batch))
                for i, (e, t) in enumerate(zip(exprs, out_types, strict=True))
            ]
            + [batch.frame.get_column(WEIGHT)]
        )
    else:
        frame = evaluate(batch.frame, exprs, what, eager=eager)
    return ZSet.from_frame(frame, out_types)


def columns_and_nulls(exprs: Sequence[Scalar]) -> bool:
    """Whether a map's expressions are columns and NULL literals alone (an outer join's
    padding): it evaluates nothing, so it is built without a query and cannot fail."""
    return all(isinstance(e, Col) or (isinstance(e, Lit) and e.value is None) for e in exprs)


_ONE_NULL: dict[SqlType, pl.Series] = {}  # per type, a column of one NULL to repeat


def _nulls(name: str, t: SqlType, n: int) -> pl.Series:
    """A column of n NULLs of SQL type `t`."""
    one = _ONE_NULL.get(t)
    if one is None:
        one = _ONE_NULL[t] = pl.Series("", [None], dtype=polars_dtype(t))
    return one.new_from_index(0, n).alias(name)


def filter_rows(batch: ZSet, predicate: Scalar, what: str, eager: bool = False) -> ZSet:
    """Selection: keep the rows where `predicate` is TRUE (NULL and FALSE drop).

    A consolidated input gives a consolidated output.
    """
    if len(batch) == 0:
        return batch
    return ZSet(evaluate_predicate(batch.frame, predicate, what, eager=eager), batch.types, batch.consolidated)


def plus(parts: Sequence[ZSet], types: Sequence[SqlType]) -> ZSet:
    """The Z-set sum of the batches, consolidated."""
    return ZSet.concat(parts, types).consolidate()


def negate(batch: ZSet) -> ZSet:
    """The Z-set negation; consolidated whenever the input is."""
    return batch.negate()


# -- evaluators ---------------------------------------------------------------------------


@evaluates(op.Map)
def _map(ctx: Context, o: op.Map, args: list[Value]) -> Value:
    return map_rows(as_zset(args[0]), o.exprs, o.types, ctx.what, eager=o.eager_operands)


@evaluates(op.Filter)
def _filter(ctx: Context, o: op.Filter, args: list[Value]) -> Value:
    return filter_rows(as_zset(args[0]), o.predicate, ctx.what, eager=o.eager_operands)


@evaluates(op.Plus)
def _plus(ctx: Context, o: op.Plus, args: list[Value]) -> Value:
    if ctx.loose:  # (its readers sum equal rows themselves)
        return ZSet.concat([as_zset(a) for a in args], o.types)
    return plus([as_zset(a) for a in args], o.types)


@evaluates(op.Negate)
def _negate(ctx: Context, o: op.Negate, args: list[Value]) -> Value:
    return negate(as_zset(args[0]))

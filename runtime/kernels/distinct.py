"""DISTINCT on Z-sets and its incremental form (DBSP §4, Prop 4.7)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.errors import InternalCompilerError
from dbspc.runtime.registry import Context, Value, as_zset, evaluates
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet, take, take_weighted

_OLD = "__old"


def distinct(batch: ZSet) -> ZSet:
    """distinct(m)[x] = 1 if m[x] > 0 else 0 (DBSP §4)."""
    z = batch.consolidate()
    keep = np.flatnonzero(z.frame.get_column(WEIGHT).to_numpy() > 0)
    return ZSet(take_weighted(z.frame, keep, np.ones(len(keep), dtype=np.int64)), batch.types, consolidated=True)


def positive_part(batch: ZSet) -> ZSet:
    """relu(m)[x] = max(m[x], 0): the bag difference a − b of EXCEPT ALL when m = a − b."""
    z = batch.consolidate()
    return ZSet(
        take(z.frame, np.flatnonzero(z.frame.get_column(WEIGHT).to_numpy() > 0)), batch.types, consolidated=True
    )


# f(i + d) - f(i) per row, from i (the weight held) and new = i + d, as int64 arrays
Weight = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _distinct_weight(i: np.ndarray, new: np.ndarray) -> np.ndarray:
    return ((i <= 0) & (new > 0)).astype(np.int64) - ((i > 0) & (new <= 0))


def _relu_weight(i: np.ndarray, new: np.ndarray) -> np.ndarray:
    return np.maximum(new, 0) - np.maximum(i, 0)


def distinct_delta(old: Trace, delta: ZSet) -> ZSet:
    """(↑distinct)^Δ = ↑H(z⁻¹(I d), d), DBSP Prop 4.7, with i = the contents of `old`:

        H(i, d)[x] = -1 if i[x] > 0 and (i+d)[x] <= 0
                     +1 if i[x] <= 0 and (i+d)[x] > 0
                      0 otherwise.

    Only the rows present in `d` are examined (one indexed lookup each), so the cost is
    O(|d| log |i|). `old` must be keyed by all columns; it is not modified (the caller
    inserts `delta` when the step commits).
    """
    return pointwise_delta(old, delta, _distinct_weight)


def positive_part_delta(old: Trace, delta: ZSet) -> ZSet:
    """(↑relu)^Δ(d)[x] = relu(i[x] + d[x]) − relu(i[x]) for the rows x of d (the argument of
    Prop 4.7 holds for any f with f(0) = 0 applied to each row's weight)."""
    return pointwise_delta(old, delta, _relu_weight)


def pointwise_delta(old: Trace, delta: ZSet, weight: Weight) -> ZSet:
    """f(i + d) − f(i) per row of d, given as `weight(i, i + d)`, with i read from `old`:
    by one probe of its runs (`Trace.weights_of`), or, when hashes collide, by an exact
    lookup and a null-safe join."""
    types = delta.types
    if old.key != tuple(range(len(types))):
        raise ValueError("a pointwise delta needs a trace keyed by all its columns")
    d = delta.consolidate()
    if d.frame.height == 0:
        return ZSet.empty(types)
    cols = d.columns
    held = old.weights_of(d.frame, d.hashes) if cols else None
    if held is not None:
        rows = d.frame
    elif cols:
        stored = old.lookup(d.frame, cols).rename({WEIGHT: _OLD})
        # Null-safe: a row with NULLs is the same Z-set element as its stored copy.
        both = d.frame.join(stored, on=cols, how="left", nulls_equal=True)
        held = both.get_column(_OLD).fill_null(0).to_numpy()
        rows = both.drop(_OLD)
    else:
        # Zero columns: the only element is the empty row.
        held = np.full(d.frame.height, int(old.snapshot().frame.get_column(WEIGHT).sum()), dtype=np.int64)
        rows = d.frame
    h = weight(held, held + rows.get_column(WEIGHT).to_numpy())
    keep = np.flatnonzero(h)
    return ZSet(take_weighted(rows, keep, h[keep]), types, consolidated=True)


@evaluates(op.Distinct)
def _distinct(ctx: Context, o: op.Distinct, args: list[Value]) -> Value:
    return distinct(as_zset(args[0]))


@evaluates(op.DistinctIncremental)
def _distinct_h(ctx: Context, o: op.DistinctIncremental, args: list[Value]) -> Value:
    state = args[0]  # z⁻¹(I d): the integral as of the previous step
    if not isinstance(state, Trace):
        raise InternalCompilerError("distinct_h reads an integral through z⁻¹")
    return distinct_delta(state, as_zset(args[1]))


@evaluates(op.PositivePart)
def _positive_part(ctx: Context, o: op.PositivePart, args: list[Value]) -> Value:
    return positive_part(as_zset(args[0]))


@evaluates(op.PositivePartIncremental)
def _positive_part_h(ctx: Context, o: op.PositivePartIncremental, args: list[Value]) -> Value:
    state = args[0]
    if not isinstance(state, Trace):
        raise InternalCompilerError("positive_part_h reads an integral through z⁻¹")
    return positive_part_delta(state, as_zset(args[1]))

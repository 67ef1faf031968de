"""Equi-joins of Z-sets (DBSP Table 1: JOIN ON a.c1 = b.c2 is ⋈, bilinear).

(a ⋈ b)[(x, y)] = a[x] · b[y] for every pair whose keys are equal, so the output weight
is the product of the input weights. Being bilinear, ⋈ is incrementalised by Thm 3.4:
Δ(a⋈b) = Δa⋈Δb + z⁻¹(I a)⋈Δb + Δa⋈z⁻¹(I b); `join_with_trace` computes one
Δ ⋈ I-term by probing the other side's indexed integral (a `Trace`), so a step costs
O(|Δ| log |state| + matches) rather than a scan of the state.

SQL equality: a NULL in any key column matches nothing (unlike the traces' own
null-safe key equality, which GROUP BY and DISTINCT need).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.errors import InternalCompilerError
from dbspc.compiler.types import SqlType
from dbspc.runtime.native import spine
from dbspc.runtime.registry import Context, Value, evaluates
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import (
    WEIGHT,
    ZSet,
    col_name,
    frame_of,
    hash_rows,
    int64_series,
    pick,
    rows_equal,
    take,
    take_series,
)

_LW = "__lw"
_RW = "__rw"


def _side(frame: pl.DataFrame, prefix: str, weight: str) -> pl.DataFrame:
    """Rename c_i -> {prefix}{i} and w -> weight, so both sides' names are disjoint."""
    n = len(frame.columns) - 1
    return pick(frame, [*(col_name(i) for i in range(n)), WEIGHT], [*(f"{prefix}{i}" for i in range(n)), weight])


def drop_null_keys(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    if not keys or not any(frame.get_column(k).null_count() for k in keys):
        return frame
    return frame.filter(pl.all_horizontal([pl.col(k).is_not_null() for k in keys]))


def _common_dtype(a: pl.DataType, b: pl.DataType) -> pl.DataType:
    """A dtype both key columns can be compared in (the compiler normally unifies them)."""
    if a == b:
        return a
    if a.is_integer() and b.is_integer():
        return pl.Int64()
    if a.is_numeric() and b.is_numeric():
        return pl.Float64()
    return a


def _assemble(joined: pl.DataFrame, n_left: int, n_right: int, out_types: Sequence[SqlType]) -> ZSet:
    """Left columns, then right columns, renumbered c0..; weight = product."""
    names = [*(f"__l{i}" for i in range(n_left)), *(f"__r{j}" for j in range(n_right))]
    frame = pick(joined, names, [col_name(i) for i in range(n_left + n_right)])
    weight = (joined.get_column(_LW) * joined.get_column(_RW)).alias(WEIGHT)
    return ZSet.from_frame(frame.hstack([weight]), out_types).consolidate()


def _equi_join(
    left: pl.DataFrame,
    right: pl.DataFrame,
    left_on: Sequence[str],
    right_on: Sequence[str],
) -> pl.DataFrame:
    """Inner join on already renamed, null-free keys (at least one: a cross product pairs
    its rows in numpy, `_cross_pairs`)."""
    if all(left.schema[a] == right.schema[b] for a, b in zip(left_on, right_on, strict=True)):
        return left.join(right, left_on=list(left_on), right_on=list(right_on), how="inner", coalesce=False)
    casts_l: list[pl.Expr] = []
    casts_r: list[pl.Expr] = []
    lk: list[str] = []
    rk: list[str] = []
    for i, (a, b) in enumerate(zip(left_on, right_on, strict=True)):
        dtype = _common_dtype(left.schema[a], right.schema[b])
        # Join on cast copies, so the output keeps each side's own column types.
        casts_l.append(pl.col(a).cast(dtype).alias(f"__kl{i}"))
        casts_r.append(pl.col(b).cast(dtype).alias(f"__kr{i}"))
        lk.append(f"__kl{i}")
        rk.append(f"__kr{i}")
    joined = left.with_columns(casts_l).join(
        right.with_columns(casts_r), left_on=lk, right_on=rk, how="inner", coalesce=False
    )
    return joined


def join(
    left: ZSet,
    right: ZSet,
    left_keys: Sequence[int],
    right_keys: Sequence[int],
    out_types: Sequence[SqlType],
    consolidate: bool = True,
) -> ZSet:
    """left ⋈ right on left[left_keys[i]] = right[right_keys[i]] (SQL: NULL never matches).

    Output: left's columns then right's, weight = product (DBSP Table 1); empty keys
    give the cross product ×. Consolidated, unless `consolidate=False` (for a caller
    that sums several terms and groups once): then pairs found by hash are left apart.
    """
    if len(left_keys) != len(right_keys):
        raise ValueError("join needs as many left keys as right keys")
    n_left, n_right = len(left.types), len(right.types)
    if left.frame.height == 0 or right.frame.height == 0:
        return ZSet.empty(out_types)
    if left_keys:
        pairs = _hash_pairs(left, left_keys, right, right_keys)
    else:
        pairs = _cross_pairs(left.frame.height, right.frame.height)
    if pairs is not None:
        li, ri = pairs
        joined = _paired(take(left.frame, li), take(right.frame, ri), out_types)
        # pairs of distinct rows are distinct rows: consolidated inputs need no consolidation
        if left.consolidated and right.consolidated:
            return ZSet(joined.frame, joined.types, consolidated=True)
        return joined.consolidate() if consolidate else joined
    lk = [f"__l{i}" for i in left_keys]
    rk = [f"__r{j}" for j in right_keys]
    lf = drop_null_keys(_side(left.frame, "__l", _LW), lk)
    rf = drop_null_keys(_side(right.frame, "__r", _RW), rk)
    return _assemble(_equi_join(lf, rf, lk, rk), n_left, n_right, out_types)


def _non_null_rows(frame: pl.DataFrame, keys: Sequence[int]) -> np.ndarray | None:
    """The rows whose key columns are all non-NULL (None: every row)."""
    nullable = [frame.get_column(col_name(k)) for k in keys if frame.get_column(col_name(k)).null_count()]
    if not nullable:
        return None
    ok = np.ones(frame.height, dtype=bool)
    for column in nullable:
        ok &= column.is_not_null().to_numpy()
    return np.flatnonzero(ok)


def _cross_pairs(n_left: int, n_right: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (left row, right row) pair, left-major: a cross product's (×), gathered like
    an equi-join's pairs rather than by polars' cross join (~0.3 ms a call on the few
    rows of a small step, where this costs ~30 us)."""
    return np.repeat(np.arange(n_left), n_right), np.tile(np.arange(n_right), n_left)


def _hash_pairs(
    left: ZSet, left_keys: Sequence[int], right: ZSet, right_keys: Sequence[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The (left row, right row) pairs with equal, non-NULL keys, found by key hashes
    (`hash_rows`, matched in one compiled call, `spine.match_hashes`) instead of a polars
    join (~0.2-0.3 ms a call for the small batches of a recursion's iterations). None (the
    caller joins with polars) for key columns of different types, or keys of different
    values sharing a hash."""
    lcols = [left.frame.get_column(col_name(k)) for k in left_keys]
    rcols = [right.frame.get_column(col_name(k)) for k in right_keys]
    if [c.dtype for c in lcols] != [c.dtype for c in rcols]:
        return None
    lrows, rrows = _non_null_rows(left.frame, left_keys), _non_null_rows(right.frame, right_keys)
    if lrows is not None:
        lcols = [take_series(c, lrows) for c in lcols]
    if rrows is not None:
        rcols = [take_series(c, rrows) for c in rcols]
    if not len(lcols[0]) or not len(rcols[0]):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    lh = left.key_hashes(left_keys) if lrows is None else hash_rows(lcols)
    rh = right.key_hashes(right_keys) if rrows is None else hash_rows(rcols)
    li, ri = spine.match_hashes(lh, rh)
    if not rows_equal(lcols, li, rcols, ri):
        return None
    return (li if lrows is None else lrows[li]), (ri if rrows is None else rrows[ri])


def _paired(left: pl.DataFrame, right: pl.DataFrame, out_types: Sequence[SqlType]) -> ZSet:
    """Row i of `left` beside row i of `right` (both c0.., w), weight = product."""
    columns = [*left.get_columns()[:-1], *right.get_columns()[:-1]]
    weight = left.get_column(WEIGHT).to_numpy() * right.get_column(WEIGHT).to_numpy()
    frame = frame_of([c.alias(col_name(i)) for i, c in enumerate(columns)] + [int64_series(WEIGHT, weight)])
    return ZSet.from_frame(frame, out_types)


def join_with_trace(
    delta: ZSet,
    delta_keys: Sequence[int],
    trace: Trace,
    delta_is_left: bool,
    out_types: Sequence[SqlType],
    consolidate: bool = True,
) -> ZSet:
    """delta ⋈ (contents of `trace`), one Δ⋈I term of Thm 3.4; `consolidate=False`, as
    for `join`, leaves equal rows of pairs found by hash apart.

    The trace's key columns are the other side's join keys, in the order of
    `delta_keys`. Columns: left side first, then right, whichever side `delta` is.
    Cost O(|delta| · log|trace| + matches): only trace rows with a probed key are read.
    """
    if len(delta_keys) != len(trace.key):
        raise ValueError("join_with_trace: delta keys and trace key differ in length")
    if delta.frame.height == 0 or len(trace) == 0:
        return ZSet.empty(out_types)
    d_names = [col_name(i) for i in delta_keys]
    d_frame = drop_null_keys(delta.frame, d_names)
    if d_frame.height == 0:
        return ZSet.empty(out_types)
    # Pairs of distinct delta rows and distinct stored rows (one run holds each row once)
    # are distinct joined rows: then nothing needs consolidating.
    pairs: tuple[np.ndarray, pl.DataFrame] | None
    if d_names:
        distinct = delta.consolidated and trace.run_count <= 1
        known = delta.key_hashes(delta_keys) if d_frame is delta.frame else None  # (no NULL key dropped)
        pairs = trace.matches(d_frame, d_names, known)
    else:  # a cross product with the whole integral, consolidated
        stored = trace.snapshot().frame
        d_rows, t_rows = _cross_pairs(d_frame.height, stored.height)
        distinct, pairs = delta.consolidated, (d_rows, take(stored, t_rows))
    if pairs is not None:
        if not distinct:
            return join_pairs(d_frame, *pairs, delta_is_left, out_types, consolidate)
        paired = join_pairs(d_frame, *pairs, delta_is_left, out_types, consolidate=False)
        return ZSet(paired.frame, paired.types, consolidated=True)
    stored = trace.lookup(d_frame, d_names)
    if stored.height == 0:
        return ZSet.empty(out_types)
    # Probes had no NULL key, so the null-safe lookup returned no NULL-keyed row either.
    d_prefix, t_prefix = ("__l", "__r") if delta_is_left else ("__r", "__l")
    d_side = _side(d_frame, d_prefix, _LW if delta_is_left else _RW)
    t_side = _side(stored, t_prefix, _RW if delta_is_left else _LW)
    d_on = [f"{d_prefix}{i}" for i in delta_keys]
    t_on = [f"{t_prefix}{k}" for k in trace.key]
    if delta_is_left:
        joined = _equi_join(d_side, t_side, d_on, t_on)
        n_left, n_right = len(delta.types), len(trace.types)
    else:
        joined = _equi_join(t_side, d_side, t_on, d_on)
        n_left, n_right = len(trace.types), len(delta.types)
    return _assemble(joined, n_left, n_right, out_types)


def join_pairs(
    delta: pl.DataFrame,
    positions: np.ndarray,
    stored: pl.DataFrame,
    delta_is_left: bool,
    out_types: Sequence[SqlType],
    consolidate: bool = True,
) -> ZSet:
    """The joined rows of matched pairs (Trace.matches): delta row positions[i] with
    stored row i, keys already checked equal; weight = product. `consolidate=False`
    leaves equal rows apart, for a caller that sums terms and consolidates once."""
    if not len(positions):
        return ZSet.empty(out_types)
    rows = take(delta, positions)
    joined = _paired(rows, stored, out_types) if delta_is_left else _paired(stored, rows, out_types)
    return joined.consolidate() if consolidate else joined


@evaluates(op.Join)
def _join(ctx: Context, o: op.Join, args: list[Value]) -> Value:
    """Δ⋈Δ, or one Δ⋈z⁻¹(I) term of Thm 3.4 when a side is an integral (a Trace)."""
    left, right = args
    # (a join read only by readers that sum equal rows themselves leaves that to them)
    if isinstance(left, ZSet) and isinstance(right, ZSet):
        return join(left, right, o.left_keys, o.right_keys, o.types, not ctx.loose)
    if isinstance(left, Trace) and isinstance(right, ZSet):
        return join_with_trace(right, o.right_keys, left, False, o.types, not ctx.loose)
    if isinstance(left, ZSet) and isinstance(right, Trace):
        return join_with_trace(left, o.left_keys, right, True, o.types, not ctx.loose)
    raise InternalCompilerError("a join of two integrals would recompute from scratch")

"""Window functions on Z-sets, and their incremental form (per changed partition).

The kernel works on one frame holding whole partitions: it expands each row to as many
copies as its weight (each copy is a row of the SQL bag), sorts by partition, ORDER BY
keys (Spark: NULLs first ascending, last descending, unless told) and then all columns,
so ties are broken the same way at every step. Every function is then a columnar
expression over the sorted frame using row positions: the partition's first and last
row, the current row's peer group (rows equal on the ORDER BY keys) and the frame
bounds [lo, hi]; SUM/COUNT/AVG over a frame are differences of per-partition prefix
sums, MIN/MAX running minima read at the frame's open end. No per-row Python.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.errors import InternalCompilerError, RuntimeSqlError
from dbspc.compiler.logical.plan import Frame, OrderKey, WindowCall
from dbspc.compiler.types import INTEGER_BOUNDS, SqlType
from dbspc.runtime.decimal_arithmetic import unscaled_to_decimal
from dbspc.runtime.kernels.aggregate import _rescale
from dbspc.runtime.registry import Context, Value, as_zset, evaluates
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, int64_series, pick, polars_dtype, take

_I = "__i"  # row position in the sorted frame
_START = "__start"  # position of the partition's first row
_END = "__end"
_PEER = "__peer"  # peer group number (rows of a partition equal on the ORDER BY keys)
_PSTART = "__pstart"
_PEND = "__pend"
_PART = "__part"  # partition number
_KEEP = "__keep"  # within the limit

_Check = tuple[pl.Expr, str]  # rows where an error happened, and its message


def _range_col(side: str, offset: int | float) -> str:
    """The column holding a RANGE frame's value-offset bound (computed in `window`)."""
    return f"__range_{side}_{offset}"


def _is_value_offset(b: int | float | None) -> bool:
    return b is not None and b != 0


def _bounds(frame: Frame | None, has_order: bool) -> tuple[pl.Expr, pl.Expr]:
    """[lo, hi] row positions of the frame (Spark's default with ORDER BY is RANGE
    UNBOUNDED PRECEDING .. CURRENT ROW, peers included; without it the partition)."""
    if frame is None:
        frame = Frame(False, None, 0) if has_order else Frame(True, None, None)
    i, start, end = pl.col(_I), pl.col(_START), pl.col(_END)
    if frame.lo is None:
        lo = start
    elif frame.rows:
        lo = pl.max_horizontal(i + frame.lo, start)
    elif _is_value_offset(frame.lo):
        lo = pl.col(_range_col("lo", frame.lo))
    else:
        lo = pl.col(_PSTART)
    if frame.hi is None:
        hi = end
    elif frame.rows:
        hi = pl.min_horizontal(i + frame.hi, end)
    elif _is_value_offset(frame.hi):
        hi = pl.col(_range_col("hi", frame.hi))
    else:
        hi = pl.col(_PEND)
    return lo, hi


def _range_bounds(rows: pl.DataFrame, key: OrderKey, key_type: SqlType, side: str, offset: int | float) -> pl.Series:
    """Row positions of a RANGE frame's value bound, for every row at once: with v the
    key (negated for DESC, so the frame runs forwards), `lo` is the first row of the
    partition with v >= v_row + offset and `hi` the last with v <= v_row + offset. One
    lexsort of the rows and the probes; rows with a NULL key take their NULL peers
    (Spark), and NULL keys fall outside every non-NULL row's frame."""
    col = rows[col_name(key.index)]
    null = col.is_null().to_numpy()
    phys = col.to_physical()
    if key_type.is_float:
        v = phys.cast(pl.Float64).fill_null(0.0).to_numpy()
    else:
        v = phys.cast(pl.Int64).fill_null(0).to_numpy()
    if key.desc:
        v = -v
    n = rows.height
    part = rows[_PART].to_numpy()
    rank = np.where(null, 0 if key.nulls_first else 2, 1)
    # probes sort before equal rows (lo: count rows < target) or after them (hi: rows <= target)
    kind = np.concatenate([np.ones(n, dtype=np.int8), np.full(n, 0 if side == "lo" else 2, dtype=np.int8)])
    order = np.lexsort(
        (kind, np.concatenate([v, v + offset]), np.concatenate([rank, np.ones(n, dtype=rank.dtype)]), np.tile(part, 2))
    )
    is_row = kind[order] == 1
    before = np.cumsum(is_row) - is_row  # rows sorted before each entry
    found = np.empty(n, dtype=np.int64)
    probes = ~is_row
    found[order[probes] - n] = before[probes]
    if side == "hi":
        found -= 1
    peers = rows[_PSTART if side == "lo" else _PEND].to_numpy()
    return pl.Series(_range_col(side, offset), np.where(null, peers, found))


def _prefix(value: pl.Expr, lo: pl.Expr, hi: pl.Expr, per_partition: bool = False) -> pl.Expr:
    """Σ value over rows lo..hi, as a difference of prefix sums (exact for integers).
    Floats use running sums restarted per partition, read only at hi (the binder allows
    them only over frames that start the partition), so nothing is subtracted."""
    c = value.cum_sum().over(_PART) if per_partition else value.cum_sum()
    start = pl.col(_START) if per_partition else pl.lit(0)
    before = pl.when(lo > start).then(c.gather(pl.max_horizontal(lo - 1, 0))).otherwise(pl.lit(0))
    return c.gather(pl.max_horizontal(hi, 0)) - before


def _sum_value(call: WindowCall, has_order: bool, types: tuple[SqlType, ...]) -> tuple[pl.Expr, _Check | None]:
    """SUM/AVG over the frame: differences of per-partition running sums."""
    assert call.arg is not None
    out = polars_dtype(call.type)
    lo, hi = _bounds(call.frame, has_order)
    empty = lo > hi
    x = pl.col(col_name(call.arg))
    count = _prefix(x.is_not_null().cast(pl.Int64), lo, hi)
    arg_type = types[call.arg]
    none = pl.lit(None, dtype=out)
    if arg_type.is_float and call.frame is not None and call.frame.lo is not None:
        return _sliding_float_sum(call, x, out), None
    if arg_type.is_float:
        # Frames that start the partition: the running sum is read directly, so inf and
        # NaN propagate as in Spark.
        total = _prefix(x.cast(pl.Float64).fill_null(0), lo, hi, per_partition=True)
        value = total if call.fn == "sum" else total / count.cast(pl.Float64)
        return pl.when(empty | (count == 0)).then(none).otherwise(value.cast(out)), None
    # Exact kinds sum as unscaled Int128, as GROUP BY does (runtime/kernels/aggregate.py).
    unscaled = x.to_physical() if arg_type.is_decimal else x.cast(pl.Int128)
    total = _prefix(unscaled.cast(pl.Int128).fill_null(0), lo, hi)
    some = ~empty & (count > 0)
    if call.fn == "avg" and not call.type.is_decimal:
        scale = float(10 ** (arg_type.scale or 0)) if arg_type.is_decimal else 1.0
        return pl.when(some).then(total.cast(pl.Float64) / scale / count.cast(pl.Float64)), None
    if not call.type.is_decimal:
        lo_int, hi_int = INTEGER_BOUNDS[call.type.kind]
        bad = some & ((total < pl.lit(lo_int, dtype=pl.Int128)) | (total > pl.lit(hi_int, dtype=pl.Int128)))
        return pl.when(some).then(total.cast(out, wrap_numerical=True)), (bad, "integer overflow in SUM over a window")
    in_scale = arg_type.scale or 0
    up = max(0, (call.type.scale or 0) - in_scale)
    den = pl.when(some).then(count).otherwise(1).cast(pl.Int128) if call.fn == "avg" else pl.lit(1, dtype=pl.Int128)
    value, huge = _rescale(total, up, den)
    bad = some & (huge | (value.abs() >= pl.lit(10 ** (call.type.precision or 38), dtype=pl.Int128)))
    name = "SUM" if call.fn == "sum" else "AVG"
    return pl.when(some).then(unscaled_to_decimal(value, call.type)), (
        bad,
        f"decimal overflow in {name} over a window",
    )


def _call_value(call: WindowCall, has_order: bool, types: tuple[SqlType, ...]) -> tuple[pl.Expr, _Check | None]:
    """The call's value, and for exact sums a check that it did not overflow (Spark ANSI raises)."""
    if call.fn in ("sum", "avg"):
        return _sum_value(call, has_order, types)
    return _call_expr(call, has_order, types), None


def _call_expr(call: WindowCall, has_order: bool, types: tuple[SqlType, ...]) -> pl.Expr:
    i, start, end = pl.col(_I), pl.col(_START), pl.col(_END)
    out = polars_dtype(call.type)
    if call.fn == "row_number":
        return (i - start + 1).cast(out)
    if call.fn == "rank":
        return (pl.col(_PSTART) - start + 1).cast(out)
    if call.fn == "dense_rank":
        return (pl.col(_PEER) - pl.col(_PEER).gather(start) + 1).cast(out)
    if call.fn in ("percent_rank", "cume_dist", "ntile"):
        return _distribution(call, out)
    if call.fn == "lag":
        assert call.arg is not None
        src = i - call.offset
        inside = (src >= start) & (src <= end)
        value = pl.col(col_name(call.arg)).gather(src.clip(0, pl.len() - 1)).cast(out)
        default = pl.col(col_name(call.default)).cast(out) if call.default is not None else pl.lit(None, dtype=out)
        return pl.when(inside).then(value).otherwise(default)
    lo, hi = _bounds(call.frame, has_order)
    empty = lo > hi
    if call.fn in ("first_value", "last_value", "nth_value"):
        return _row_of_frame(call, lo, hi, out)
    if call.fn == "count_star":
        return pl.when(empty).then(0).otherwise(hi - lo + 1).cast(out)
    assert call.arg is not None
    x = pl.col(col_name(call.arg))
    count = _prefix(x.is_not_null().cast(pl.Int64), lo, hi)
    if call.fn == "count":
        return pl.when(empty).then(0).otherwise(count).cast(out)
    if call.fn in ("min", "max"):
        # The binder only allows frames open at one end: read the running extreme there.
        frame = call.frame or (Frame(False, None, 0) if has_order else Frame(True, None, None))
        fold = x.cum_min if call.fn == "min" else x.cum_max
        if frame.lo is None:
            running = fold().forward_fill().over(_PART)
            value = running.gather(pl.max_horizontal(hi, 0))
        elif frame.hi is None:
            running = fold(reverse=True).backward_fill().over(_PART)
            value = running.gather(lo.clip(0, pl.len() - 1))
        elif frame.rows:
            value = _sliding_extreme(call.fn, x, pl.col(_code_col(call.arg)), frame, lo, hi)
        else:
            raise InternalCompilerError("MIN/MAX over a RANGE frame bounded at both ends")
        return pl.when(empty).then(pl.lit(None, dtype=out)).otherwise(value.cast(out))
    raise InternalCompilerError(f"unknown window function {call.fn}")


def _code_col(arg: int) -> str:
    """The column ranking input column `arg`'s values, each with its row's position:
    dense rank * rows + position (computed in `window`), so that a rolling extreme of
    it names the row that holds the extreme."""
    return f"__code{arg}"


def _sliding(call: WindowCall) -> bool:
    """MIN/MAX over a ROWS frame bounded at both ends (rolled over value codes)."""
    f = call.frame
    return call.fn in ("min", "max") and f is not None and f.rows and f.lo is not None and f.hi is not None


def _sliding_extreme(fn: str, x: pl.Expr, codes: pl.Expr, frame: Frame, lo: pl.Expr, hi: pl.Expr) -> pl.Expr:
    """MIN/MAX over ROWS BETWEEN a AND b, both bounded: a rolling extreme of width
    b - a + 1 within the partition, read at the frame's last row (partial windows at the
    partition's start are the truncated frames); where the frame runs past the partition's
    end it is a suffix of the partition, read from the reverse running extreme. Values
    roll as codes that order them and name their row (polars rolls numbers only; NULL
    for NULL), and the value is read from the row the extreme code names."""
    assert isinstance(frame.lo, int) and isinstance(frame.hi, int)
    width = frame.hi - frame.lo + 1
    roll = codes.rolling_max if fn == "max" else codes.rolling_min
    rolled = roll(window_size=max(width, 1), min_samples=1).over(_PART)
    fold = codes.cum_max if fn == "max" else codes.cum_min
    suffix = fold(reverse=True).backward_fill().over(_PART)
    last = pl.len() - 1
    inside = pl.col(_I) + frame.hi <= pl.col(_END)
    code = pl.when(inside).then(rolled.gather(hi.clip(0, last))).otherwise(suffix.gather(lo.clip(0, last)))
    return x.gather(code % pl.len())


def _sliding_float_sum(call: WindowCall, x: pl.Expr, out: pl.DataType) -> pl.Expr:
    """SUM/AVG of a FLOAT or DOUBLE over ROWS BETWEEN a AND b, both bounded, as Spark
    computes a sliding frame: afresh for every row, adding the frame's values in order
    from 0 (so -0.0 alone sums to 0.0), where a difference of running sums would round
    otherwise. One shifted column per row of the frame (the binder bounds the width)."""
    frame = call.frame
    assert frame is not None and isinstance(frame.lo, int) and isinstance(frame.hi, int)
    total: pl.Expr = pl.lit(None, dtype=pl.Float64)
    count: pl.Expr = pl.lit(0, dtype=pl.Int64)
    for offset in range(frame.lo, frame.hi + 1):
        v = x.cast(pl.Float64).shift(-offset).over(_PART)
        total = pl.when(v.is_null()).then(total).otherwise(total.fill_null(0.0) + v)
        count = count + v.is_not_null().cast(pl.Int64)
    value = total if call.fn == "sum" else total / count.cast(pl.Float64)
    return pl.when(count > 0).then(value.cast(out)).otherwise(pl.lit(None, dtype=out))


def _distribution(call: WindowCall, out: pl.DataType) -> pl.Expr:
    """PERCENT_RANK, CUME_DIST and NTILE from the row's place in its partition."""
    i, start = pl.col(_I), pl.col(_START)
    size = pl.col(_END) - start + 1
    if call.fn == "percent_rank":  # (rank - 1) / (rows - 1), 0 for a partition of one row
        rank = pl.col(_PSTART) - start + 1
        return pl.when(size > 1).then((rank - 1) / (size - 1)).otherwise(0.0).cast(out)
    if call.fn == "cume_dist":  # rows up to the last peer, over the rows
        return ((pl.col(_PEND) - start + 1) / size).cast(out)
    # NTILE(n), as Spark: the first rows % n buckets hold one row more than the others
    n = call.offset
    k = i - start
    small = size // n
    extra = size % n
    big_rows = extra * (small + 1)
    tail = extra + (k - big_rows) // pl.max_horizontal(small, 1)
    return (pl.when(k < big_rows).then(k // (small + 1)).otherwise(tail) + 1).cast(out)


def _row_of_frame(call: WindowCall, lo: pl.Expr, hi: pl.Expr, out: pl.DataType) -> pl.Expr:
    """FIRST_VALUE, LAST_VALUE (IGNORE NULLS: the first or last non-NULL value) and
    NTH_VALUE of the frame [lo, hi]: a gather at one position, NULL where there is none.
    The nearest non-NULL row at or after (before) each position is a backward (forward)
    fill of positions, read at lo (hi) and kept only inside the frame."""
    assert call.arg is not None
    x = pl.col(col_name(call.arg))
    i = pl.col(_I)
    if call.fn == "nth_value":
        at = lo + call.offset - 1
    elif not call.ignore_nulls:
        at = lo if call.fn == "first_value" else hi
    elif call.fn == "first_value":
        at = pl.when(x.is_not_null()).then(i).backward_fill().gather(lo.clip(0, pl.len() - 1))
    else:
        at = pl.when(x.is_not_null()).then(i).forward_fill().gather(hi.clip(0, pl.len() - 1))
    inside = (lo <= hi) & (at >= lo) & (at <= hi)
    value = x.gather(at.fill_null(0).clip(0, pl.len() - 1))
    return pl.when(inside.fill_null(False)).then(value.cast(out)).otherwise(pl.lit(None, dtype=out))


def window(
    batch: ZSet,
    partition: tuple[int, ...],
    order: tuple[OrderKey, ...],
    calls: tuple[WindowCall, ...],
    out_types: tuple[SqlType, ...],
    limit: int | None = None,
) -> ZSet:
    """The rows of `batch` (positive weights: a snapshot or whole partitions of one), each
    with its window functions' values, consolidated; with `limit`, only the first `limit`
    rows of each partition (a top-k: the output, and so the change, stays small)."""
    z = batch.consolidate()
    frame = z.frame
    if frame.height == 0:
        return ZSet.empty(out_types)
    weights = frame[WEIGHT].to_numpy()
    if int(weights.min()) <= 0:
        raise InternalCompilerError("window functions over a Z-set with non-positive weights")
    cols = z.columns
    rows = take(pick(frame, cols), np.repeat(np.arange(frame.height), weights))
    part_cols = [col_name(p) for p in partition]
    order_cols = [col_name(k.index) for k in order]
    rest = [c for c in cols if c not in part_cols and c not in order_cols]
    by = part_cols + order_cols + rest
    desc = [False] * len(part_cols) + [k.desc for k in order] + [False] * len(rest)
    nulls_last = [False] * len(part_cols) + [not k.nulls_first for k in order] + [False] * len(rest)
    rows = rows.sort(by, descending=desc, nulls_last=nulls_last, maintain_order=False) if by else rows
    if not part_cols and all(c.fn == "row_number" for c in calls):
        return _numbered(rows, calls, out_types, limit)
    i = pl.int_range(pl.len(), dtype=pl.Int64)
    rows = rows.with_columns_seq(i.alias(_I))

    def changed(names: list[str]) -> pl.Expr:
        first = pl.col(_I) == 0
        return pl.any_horizontal([first, *(pl.col(c).ne_missing(pl.col(c).shift(1)) for c in names)])

    new_part = changed(part_cols) if part_cols else pl.col(_I) == 0
    new_peer = changed(part_cols + order_cols) if order_cols else new_part
    rows = rows.with_columns_seq(
        new_part.cast(pl.Int64).cum_sum().alias(_PART), new_peer.cast(pl.Int64).cum_sum().alias(_PEER)
    )
    # Rows are sorted, so a partition's (a peer group's) first and last positions are
    # filled from its boundaries: linear, with no grouping.
    i = pl.col(_I)
    last = i == pl.len() - 1
    part_ends = pl.col(_PART).ne(pl.col(_PART).shift(-1)).fill_null(True) | last
    peer_ends = pl.col(_PEER).ne(pl.col(_PEER).shift(-1)).fill_null(True) | last
    part_starts = pl.col(_PART).ne_missing(pl.col(_PART).shift(1))
    peer_starts = pl.col(_PEER).ne_missing(pl.col(_PEER).shift(1))
    rows = rows.with_columns_seq(
        pl.when(part_starts).then(i).forward_fill().alias(_START),
        pl.when(part_ends).then(i).backward_fill().alias(_END),
        pl.when(peer_starts).then(i).forward_fill().alias(_PSTART),
        pl.when(peer_ends).then(i).backward_fill().alias(_PEND),
    )
    has_order = bool(order)
    ranges = {
        (side, b)
        for c in calls
        if c.frame is not None and not c.frame.rows
        for side, b in (("lo", c.frame.lo), ("hi", c.frame.hi))
        if b is not None and _is_value_offset(b)
    }
    sliding = sorted({c.arg for c in calls if _sliding(c) and c.arg is not None})
    if sliding:  # a column, so that the ranks are of the whole frame, not of each partition
        codes = [
            (pl.col(col_name(a)).rank("dense").cast(pl.Int64) * pl.len() + pl.col(_I)).alias(_code_col(a))
            for a in sliding
        ]
        rows = rows.with_columns_seq(codes)
    if ranges:
        key = order[0]  # the binder allows value offsets with exactly one ORDER BY key
        rows = rows.with_columns_seq(
            [_range_bounds(rows, key, z.types[key.index], side, b) for side, b in sorted(ranges)]
        )
    values: list[pl.Expr] = []
    checks: list[tuple[pl.Expr, str]] = []
    for j, c in enumerate(calls):
        value, check = _call_value(c, has_order, z.types)
        values.append(value.alias(col_name(len(cols) + j)))
        if check is not None:
            checks.append((check[0].any().alias(f"__bad{len(checks)}"), check[1]))
    if checks:
        flags = rows.select_seq([b for b, _ in checks]).row(0)
        for flag, (_, message) in zip(flags, checks, strict=True):
            if flag:
                raise RuntimeSqlError(message)
    if limit is not None:
        values.append((pl.col(_I) - pl.col(_START) < limit).alias(_KEEP))
    out = rows.select_seq([*cols, *values, pl.lit(1, dtype=pl.Int64).alias(WEIGHT)])
    if limit is not None:
        keep = np.flatnonzero(out.get_column(_KEEP).to_numpy())
        out = take(pick(out, [c for c in out.columns if c != _KEEP]), keep)
    return ZSet.from_frame(out, out_types).consolidate()


def _numbered(
    rows: pl.DataFrame, calls: tuple[WindowCall, ...], out_types: tuple[SqlType, ...], limit: int | None
) -> ZSet:
    """`window` for ROW_NUMBER()s over one partition (a global ORDER BY ... LIMIT k, the
    top-k's case) of rows already in window order: the first `limit` rows, numbered from
    1, built directly where the general path evaluates a chain of polars expressions."""
    head = rows if limit is None else rows.head(limit)
    numbers = int64_series("", np.arange(1, head.height + 1, dtype=np.int64))
    width = head.width
    values = [numbers.cast(polars_dtype(c.type)).alias(col_name(width + j)) for j, c in enumerate(calls)]
    weight = int64_series(WEIGHT, np.ones(head.height, dtype=np.int64))
    return ZSet.from_frame(head.hstack([*values, weight]), out_types).consolidate()


def window_delta(old: Trace, delta: ZSet, o: op.WindowIncremental) -> ZSet:
    """(↑window)^Δ for the partitions in `delta`: window(P_old + ΔP) − window(P_old),
    with P_old the stored rows of those partitions (one indexed lookup)."""
    d = delta.consolidate()
    if d.frame.height == 0:
        return ZSet.empty(o.types)
    before = ZSet(old.lookup(d.frame, [col_name(p) for p in o.partition]), delta.types)
    after = ZSet.concat([before, d], delta.types).consolidate()
    if not after.is_positive():
        raise InternalCompilerError("a partition holds a row a negative number of times")
    new = window(after, o.partition, o.order, o.calls, o.types, o.limit)
    gone = window(before, o.partition, o.order, o.calls, o.types, o.limit)
    return ZSet.concat([new, gone.negate()], o.types).consolidate()


@evaluates(op.Window)
def _window(ctx: Context, o: op.Window, args: list[Value]) -> Value:
    return window(as_zset(args[0]), o.partition, o.order, o.calls, o.types, o.limit)


@evaluates(op.WindowIncremental)
def _window_incremental(ctx: Context, o: op.WindowIncremental, args: list[Value]) -> Value:
    state = args[0]  # z⁻¹(I d), indexed by the partition columns
    if not isinstance(state, Trace):
        raise InternalCompilerError("window_incremental reads an integral through z⁻¹")
    return window_delta(state, as_zset(args[1]), o)

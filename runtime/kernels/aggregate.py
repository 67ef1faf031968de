"""GROUP BY with SQL aggregates, full and incremental (DBSP §7.2-7.4).

DBSP §7.3 turns GROUP BY into an indexed Z-set G_p(a)[k] = Σ_{p(x)=k} a[x]·x, and §7.4
applies the aggregate per group, Agg(g) = Σ_k a(k, g[k]), re-evaluating only the groups
a change touches. Two kinds of per-group state serve the aggregates:

* linear (§7.2: a_COUNT and a_SUM are linear): COUNT(*), COUNT(x), SUM(x), AVG(x). A
  group's state is a row of running sums (rows, non-NULL count, sum); the state after a
  change is old state + the change's contribution, O(1) per touched group.
* multiset: MIN/MAX and the DISTINCT variants need the group's values, so each group
  keeps its value multiset (group.., value) with weights, which survives deleting the
  current minimum. MIN/MAX also keep the rows they emitted, and over values ordered as
  int64 (integers, DECIMAL(p <= 18), dates, timestamps, booleans) each multiset again in
  value order per group (extrema_index.py): a step finds its touched groups' new extremes
  there in O(|Δ| log |group|). Over other kinds it reads a touched group's old extremes
  from the emitted rows and its multiset only when an extreme is deleted
  (`_extremum_values`); the other aggregates re-evaluate touched groups from the multiset.
  collect_list and collect_set (Spark) are the multiset itself as an ARRAY: a group's array is
  rebuilt from its multiset (each value `weight` times, or once for the set) and the
  old array retracted, so a change costs the elements of the groups it touches. Spark
  leaves the order inside the array unspecified; dbspc sorts it ascending, so that
  equal multisets give equal rows (and a retraction finds the row it emitted).

Weights are multiplicities: a row of weight 3 counts three times in COUNT and SUM.
Exact kinds (integers, decimals) are summed as unscaled Int128 integers, so SUM and AVG
are exact and order-independent; floats are summed over their finite values with
separate counts of +inf, -inf and NaN, so retracting an infinity or a NaN restores the
finite sum. The Int128 sum wraps silently only past ~1.7e38, far beyond DECIMAL(38).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.errors import RuntimeSqlError
from dbspc.compiler.logical.aggregate import (
    BITWISE,
    COLLECTS,
    JOINS,
    MODES,
    MOMENTS,
    QUANTILES,
    AggCall,
    is_running_sum,
)
from dbspc.compiler.types import BIGINT, DOUBLE, INTEGER_BOUNDS, SqlType, decimal
from dbspc.runtime.decimal_arithmetic import unscaled_to_decimal
from dbspc.runtime.kernels.extrema_index import ExtremaIndex
from dbspc.runtime.kernels.group_sums import GroupSums
from dbspc.runtime.registry import Context, Setup, Value, as_zset, evaluates
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import (
    WEIGHT,
    RowGroups,
    ZSet,
    col_name,
    concat_frames,
    decimal_of_int64,
    decimal_words,
    frame_of,
    group_rows,
    hash_rows,
    int64_series,
    pick,
    polars_dtype,
    rows_equal,
    stack,
    take,
    take_series,
    take_weighted,
)

_N = "__n"  # rows in the group (Σ weights): COUNT(*) and group liveness
# A multiset's change as an ExtremaIndex's rows: keys, values, weights.
_IndexChange = tuple[np.ndarray, np.ndarray, np.ndarray]


def _g(i: int) -> str:
    return f"__g{i}"


def _v(arg: int) -> str:
    return f"__v{arg}"


def _i128(value: int) -> pl.Expr:
    return pl.lit(value, dtype=pl.Int128)


@dataclass(frozen=True, slots=True)
class _Agg:
    """One aggregate call with its types resolved and its intermediate columns named."""

    index: int
    call: AggCall
    in_type: SqlType | None
    out_type: SqlType

    @property
    def linear(self) -> bool:
        """Kept as a running sum per group (§7.2; float SUM/AVG are not)."""
        return is_running_sum(self.call, self.in_type)

    @property
    def needs_sum(self) -> bool:
        return self.call.fn in ("sum", "avg")

    @property
    def is_float(self) -> bool:
        return self.in_type is not None and self.in_type.is_float

    @property
    def in_scale(self) -> int:
        """Scale of the unscaled integer that represents an exact input value."""
        t = self.in_type
        return (t.scale or 0) if t is not None and t.is_decimal else 0

    # Intermediate column names (per aggregate, so duplicates never clash).
    @property
    def k(self) -> str:
        return f"__k{self.index}"  # non-NULL values (distinct ones for DISTINCT)

    @property
    def s(self) -> str:
        return f"__s{self.index}"  # sum: unscaled Int128, or finite Float64 sum

    @property
    def pinf(self) -> str:
        return f"__pinf{self.index}"

    @property
    def ninf(self) -> str:
        return f"__ninf{self.index}"

    @property
    def nan(self) -> str:
        return f"__nan{self.index}"

    @property
    def m(self) -> str:
        return f"__m{self.index}"  # MIN / MAX value


def _sum_parts(a: _Agg, v: pl.Expr, w: pl.Expr) -> list[pl.Expr]:
    """Aggregation expressions for the (k, s[, ±inf, NaN]) parts of Σ w·v over non-NULL v."""
    parts = [pl.when(v.is_not_null()).then(w).otherwise(0).sum().cast(pl.Int64).alias(a.k)]
    if not a.needs_sum:
        return parts
    if a.is_float:
        vf = v.cast(pl.Float64)
        parts += [
            pl.when(vf.is_finite()).then(vf * w.cast(pl.Float64)).otherwise(0.0).sum().alias(a.s),
            pl.when(vf == float("inf")).then(w).otherwise(0).sum().cast(pl.Int64).alias(a.pinf),
            pl.when(vf == float("-inf")).then(w).otherwise(0).sum().cast(pl.Int64).alias(a.ninf),
            pl.when(vf.is_nan()).then(w).otherwise(0).sum().cast(pl.Int64).alias(a.nan),
        ]
    else:
        t = a.in_type
        unscaled = v.to_physical() if t is not None and t.is_decimal else v.cast(pl.Int128)
        parts.append((unscaled.cast(pl.Int128) * w.cast(pl.Int128)).sum().alias(a.s))
    return parts


def _exact_values(column: pl.Series) -> tuple[np.ndarray, np.ndarray | None] | None:
    """An integer or DECIMAL(p <= 18) column as int64 unscaled values and a validity mask
    (None: no NULLs), read from its Arrow buffers without a copy; None for other types.
    A NULL's slot may hold anything, so callers multiply by the mask."""
    dtype = column.dtype
    if dtype.is_integer():
        if dtype == pl.UInt64:
            return None
        values = column.fill_null(0).to_numpy() if column.null_count() else column.to_numpy()
        values = values.astype(np.int64, copy=False)
    elif isinstance(dtype, pl.Decimal) and dtype.precision <= 18:
        read = decimal_words(column)
        if read is None:
            return None
        return read[0][:, 0], read[1]  # below 10^18 the low word is the value
    else:
        return None
    valid = column.is_not_null().to_numpy() if column.null_count() else None
    return values, valid


@dataclass(frozen=True, slots=True)
class _Sums:
    """The linear parts of some groups as int64 arrays, one slot per group: rows (n), and
    per linear aggregate (by index) its non-NULL count (k) and unscaled sum (s)."""

    n: np.ndarray
    k: dict[int, np.ndarray]
    s: dict[int, np.ndarray]


# An indexed multiset's waiting changes reach its trace past this many rows (and an
# eighth of the trace): a run of them costs about what a run of one step's did.
_FOLD_ROWS = 16384

# Sums stay below this, so that adding two of them never leaves int64.
_SUM_BOUND = 1 << 62


# A batch's weights and, by aggregate index, each linear aggregate's values as int64
# (unscaled) with their validity (None: no NULLs).
_Exact = tuple[np.ndarray, dict[int, tuple[np.ndarray, np.ndarray | None]]]


def _exact_batch(plan: _Plan, work: pl.DataFrame) -> _Exact | None:
    """The weights and linear aggregates' values of a batch, as int64 arrays read in
    place (a COUNT's as zeros: only their validity counts). None for an empty batch, a
    summed value that is not an integer or a DECIMAL of precision <= 18, or sums over
    the batch that could leave int64."""
    n = work.height
    if n == 0:
        return None
    weights = work.get_column(WEIGHT).to_numpy()
    w_max = max(int(weights.max()), -int(weights.min()))
    if w_max * n >= _SUM_BOUND:
        return None
    values: dict[int, tuple[np.ndarray, np.ndarray | None]] = {}
    for a in plan.aggs:
        if not a.linear or a.call.fn == "count_star":
            continue
        assert a.call.arg is not None
        column = work.get_column(_v(a.call.arg))
        if not a.needs_sum:  # a COUNT reads only which values are NULL, of any type
            valid = column.is_not_null().to_numpy() if column.null_count() else None
            values[a.index] = (np.zeros(n, dtype=np.int64), valid)
            continue
        read = _exact_values(column)
        if read is None:
            return None
        v_max = max(int(read[0].max()), -int(read[0].min()))
        if v_max * w_max * n >= _SUM_BOUND:  # the int64 sums could overflow: polars sums in Int128
            return None
        values[a.index] = read
    return weights, values


def _counted(weights: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """The weights of the rows whose value is not NULL (0 for the others)."""
    return weights if valid is None else weights * valid


def _linear_arrays(plan: _Plan, work: pl.DataFrame) -> tuple[RowGroups, _Sums] | None:
    """The batch's rows grouped by the group columns (`group_rows`: a hash of the group
    columns, one compiled sort) and each group's linear parts summed in int64 with
    np.add.reduceat; None where `_exact_batch` is."""
    read = _exact_batch(plan, work)
    if read is None:
        return None
    weights, values = read
    n = work.height
    if plan.gnames:
        groups = group_rows([work.get_column(g) for g in plan.gnames])
    else:
        groups = RowGroups(np.arange(n, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    sums = _Sums(groups.sums(weights), {}, {})
    for i, (v, valid) in values.items():
        counted = _counted(weights, valid)
        sums.k[i] = groups.sums(counted)
        if plan.aggs[i].needs_sum:
            sums.s[i] = groups.sums(v * counted)
    return groups, sums


def _row_parts(layout: list[tuple[str, int]], read: _Exact) -> np.ndarray:
    """Each row's linear parts in the table's layout (`_layout_matrix`): its weight, then
    per part its weight if counted ("k") or its value times that ("s")."""
    weights, values = read
    counted = {i: _counted(weights, valid) for i, (_, valid) in values.items()}
    parts = np.empty((len(weights), 1 + len(layout)), dtype=np.int64)
    parts[:, 0] = weights
    for j, (part, i) in enumerate(layout, start=1):
        parts[:, j] = counted[i] if part == "k" else values[i][0] * counted[i]
    return parts


def _linear_sums(plan: _Plan, work: pl.DataFrame) -> pl.DataFrame | None:
    """plan.linear_state(work) without polars' group-by, whose fixed cost (~1 ms a call)
    dominated a small step (see `_linear_arrays`; None when it is)."""
    summed = _linear_arrays(plan, work)
    if summed is None:
        return None
    groups, sums = summed
    columns = [pl.Series(_N, sums.n, dtype=pl.Int64)]
    for a in plan.aggs:
        if a.index in sums.k:
            columns.append(pl.Series(a.k, sums.k[a.index], dtype=pl.Int64))
        if a.index in sums.s:
            columns.append(pl.Series(a.s, sums.s[a.index], dtype=pl.Int64).cast(pl.Int128))
    if not plan.gnames:
        return pl.DataFrame(columns)
    return take(pick(work, plan.gnames), groups.reps).hstack(columns)


def _moment(fn: str, value: pl.Expr, weight: pl.Expr) -> pl.Expr:
    """Variance or standard deviation over a group's (value, multiplicity) rows, in two
    passes in DOUBLE: NULL for no value (and for one value, sample forms: Spark 3+).
    Summed in value order, so the same multiset always gives the same bits (a later
    change retracts exactly the row emitted before)."""
    v, w = value.cast(pl.Float64).sort_by(value), weight.cast(pl.Float64).sort_by(value)
    n = w.sum()
    m2 = (w * (v - (v * w).sum() / n) ** 2).sum()
    var = pl.when(n > 1).then(m2 / (n - 1)) if fn.endswith("samp") else pl.when(n > 0).then(m2 / n)
    return var.sqrt() if fn.startswith("stddev") else var


def _each_copy(value: pl.Expr, once: bool) -> pl.Expr:
    """A group's values from its multiset (NULLs are never stored), each as many times as
    its weight, or once."""
    if once:
        return value  # the multiset holds each value once
    return value.repeat_by(pl.col(WEIGHT)).list.explode(keep_nulls=False, empty_as_null=False)


def _percentile(value: pl.Expr, weight: pl.Expr, fraction: float) -> pl.Expr:
    """Spark's exact percentile of a group's (value, count) multiset, as one aggregation:
    with n values in ascending order (NaN last), position = (n - 1) * fraction, and the
    values at ranks floor and ceil of it interpolated as Spark writes it,
    (higher - position) * lower_value + (position - lower) * higher_value."""
    present = value.is_not_null()
    v = value.filter(present).cast(pl.Float64)
    w = weight.filter(present).cast(pl.Int64)
    order = v.arg_sort()
    sorted_v, running = v.gather(order), w.gather(order).cum_sum()
    n = w.sum()
    position = (n - 1).cast(pl.Float64) * fraction
    lower, higher = position.floor(), position.ceil()
    # the value of 0-based rank r is the first whose running count passes r
    low_value = sorted_v.filter(running > lower).first()
    high_value = sorted_v.filter(running > higher).first()
    mixed = (higher - position) * low_value + (position - lower) * high_value
    exact = (higher == lower) | (high_value == low_value)
    return pl.when(n > 0).then(pl.when(exact).then(low_value).otherwise(mixed))


def _group_agg(frame: pl.DataFrame, keys: list[str], exprs: list[pl.Expr]) -> pl.DataFrame:
    """group_by(keys).agg(exprs); with no keys, one row even for an empty frame."""
    if not keys:
        return frame.select(exprs)
    return frame.group_by(keys).agg(exprs)


def _join_groups(left: pl.DataFrame, right: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Attach per-group columns; NULL group keys are one group (null-safe)."""
    if not keys:
        return pl.concat([left, right], how="horizontal")
    rows = _rows_of_groups(pick(right, keys).get_columns(), pick(left, keys).get_columns())
    if rows is None:
        return left.join(right, on=keys, how="left", nulls_equal=True)
    # polars' join hands its work to the thread pool (~0.3-1 ms for a few rows); this
    # gathers the right's columns in the calling thread
    at, found = rows
    attached = [c for c in right.get_columns() if c.name not in keys]
    if found.all():
        return left.hstack([take_series(c, at) for c in attached])
    index = pl.Series(at).scatter(np.flatnonzero(~found), None)  # a NULL index gathers NULL
    return left.hstack([c.gather(index) for c in attached])


def _rows_of_groups(stored: Sequence[pl.Series], wanted: Sequence[pl.Series]) -> tuple[np.ndarray, np.ndarray] | None:
    """For each row of `wanted`, the row of `stored` (whose rows are distinct) holding
    the same key, found by row hash: (row, found) with row 0 where not found. None when
    two stored keys share a hash, or a hash match is not an equal row (a collision):
    the caller's exact path decides."""
    n = len(wanted[0])
    if len(stored[0]) == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    stored_h, wanted_h = hash_rows(stored), hash_rows(wanted)
    order = np.argsort(stored_h, kind="stable")
    sorted_h = stored_h[order]
    if bool((sorted_h[1:] == sorted_h[:-1]).any()):
        return None
    at = order[np.minimum(np.searchsorted(sorted_h, wanted_h), len(sorted_h) - 1)]
    found = stored_h[at] == wanted_h
    if not rows_equal(stored, at[found], wanted, np.flatnonzero(found)):
        return None
    return np.where(found, at, 0), found


def _rescale(s: pl.Expr, num_pow: int, den: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """round_half_up(s · 10^num_pow / den) in Int128 (den > 0), and a flag that the
    quotient is too large to compute without wrapping (the caller reports overflow).

    Splits |s| = q·den + r so no intermediate exceeds |result| or r·10^num_pow.
    """
    scale = _i128(10**num_pow)
    a = s.abs()
    q = a // den
    r = a % den
    frac = r * scale
    up = ((frac % den) * _i128(2) >= den).cast(pl.Int128)
    result = s.sign() * (q * scale + frac // den + up)
    huge = q > _i128(10**38 // 10**num_pow)
    return result, huge


class _Plan:
    """The resolved shape of one GROUP BY: columns, state layout and output formulas."""

    def __init__(
        self,
        input_types: Sequence[SqlType],
        group: Sequence[int],
        aggs: Sequence[AggCall],
        out_types: Sequence[SqlType],
        is_global: bool,
    ) -> None:
        if len(out_types) != len(group) + len(aggs):
            raise ValueError("aggregate: out_types must cover the group columns and aggregates")
        if is_global and group:
            raise ValueError("a global aggregate has no group columns")
        self.input_types = tuple(input_types)
        self.group = tuple(group)
        self.out_types = tuple(out_types)
        self.is_global = is_global
        self.gnames = [_g(i) for i in range(len(group))]
        self.group_types = [self.input_types[c] for c in self.group]
        self.aggs = [
            _Agg(i, call, None if call.arg is None else self.input_types[call.arg], out_types[len(group) + i])
            for i, call in enumerate(aggs)
        ]
        self.args = sorted({a.call.arg for a in self.aggs if a.call.arg is not None})
        # Columns that need the per-group multiset of values, and their aggregates.
        self.mset_aggs: dict[int, list[_Agg]] = {}
        for a in self.aggs:
            if not a.linear and a.call.arg is not None:
                self.mset_aggs.setdefault(a.call.arg, []).append(a)
        # Linear state row: group.., rows, then each linear aggregate's running parts.
        self.state_cols: list[tuple[str, SqlType]] = [(_N, BIGINT)]
        for a in self.aggs:
            if not a.linear or a.call.fn == "count_star":
                continue
            self.state_cols.append((a.k, BIGINT))
            if a.needs_sum:
                if a.is_float:
                    self.state_cols += [(a.s, DOUBLE), (a.pinf, BIGINT), (a.ninf, BIGINT), (a.nan, BIGINT)]
                else:
                    # DECIMAL(38,0) is an exact container for the Int128 running sum.
                    self.state_cols.append((a.s, decimal(38, 0)))
        self.state_types = [*self.group_types, *(t for _, t in self.state_cols)]
        self.state_names = [*self.gnames, *(name for name, _ in self.state_cols)]
        self._finals: tuple[list[pl.Expr], list[tuple[pl.Expr, str]]] | None = None

    # -- shaping -------------------------------------------------------------------

    def work(self, batch: pl.DataFrame) -> pl.DataFrame:
        """Project a batch (c0.., w) to the group columns, the aggregated columns and w."""
        names = [*(col_name(c) for c in self.group), *(col_name(arg) for arg in self.args), WEIGHT]
        return pick(batch, names, [*self.gnames, *(_v(arg) for arg in self.args), WEIGHT])

    def to_trace_frame(self, state: pl.DataFrame, weight: int) -> pl.DataFrame:
        """Internal state columns -> c0.., w, for the state trace."""
        frame = pick(state, self.state_names, [col_name(i) for i in range(len(self.state_names))])
        return frame.hstack([pl.Series(WEIGHT, np.full(state.height, weight, dtype=np.int64))])

    def from_trace_frame(self, stored: pl.DataFrame) -> pl.DataFrame:
        """c0.. of the state trace -> internal state columns (Int128 running sums)."""
        columns = []
        for i, (name, t) in enumerate(zip(self.state_names, self.state_types, strict=True)):
            c = stored.get_column(col_name(i))
            if i >= len(self.gnames) and t.is_decimal:
                c = c.cast(pl.Int128)  # scale 0: exact
            columns.append(c.alias(name))
        return pl.DataFrame(columns)

    # -- evaluation ----------------------------------------------------------------

    def linear_state(self, work: pl.DataFrame) -> pl.DataFrame:
        """Per-group Σ over the batch of each linear part (a group's contribution)."""
        summed = _linear_sums(self, work)
        if summed is not None:
            return summed
        w = pl.col(WEIGHT)
        exprs = [w.sum().cast(pl.Int64).alias(_N)]
        for a in self.aggs:
            if a.linear and a.call.fn != "count_star":
                assert a.call.arg is not None
                exprs += _sum_parts(a, pl.col(_v(a.call.arg)), w)
        return _group_agg(work, self.gnames, exprs)

    def add_states(self, parts: list[pl.DataFrame]) -> pl.DataFrame:
        """old state + contribution: the state is linear in the input (§7.2)."""
        if len(parts) == 2 and self.gnames:
            added = _add_aligned(self, *parts)
            if added is not None:
                return added
        frame = concat_frames(parts)
        sums = [pl.col(name).sum().alias(name) for name, _ in self.state_cols]
        return _group_agg(frame, self.gnames, sums)

    def mset_eval(self, arg: int, mset: pl.DataFrame) -> pl.DataFrame:
        """Evaluate arg's multiset aggregates over (group.., value, w>0) rows."""
        direct = _extremes(self, arg, mset)
        if direct is not None:
            return direct
        v = pl.col(_v(arg))
        exprs: list[pl.Expr] = []
        for a in self.mset_aggs[arg]:
            if a.call.fn in MOMENTS:
                weight = pl.col(WEIGHT).sign() if a.call.distinct else pl.col(WEIGHT)  # once per value
                exprs.append(_moment(a.call.fn, v, weight).alias(a.m))
            elif a.call.fn in COLLECTS:
                array = _each_copy(v, a.call.fn == "collect_set" or a.call.distinct).sort()
                exprs.append((array if self.gnames else array.implode()).alias(a.m))
            elif a.call.fn in JOINS:
                # a group with no string has no multiset row: its listagg is NULL by the join
                values = _each_copy(v, a.call.distinct).sort(descending=a.call.descending)
                exprs.append(values.str.join(a.call.separator or "").alias(a.m))
            elif a.call.fn in QUANTILES:
                weight = pl.col(WEIGHT).sign() if a.call.distinct else pl.col(WEIGHT)
                exprs.append(_percentile(v, weight, a.call.fraction or 0.0).alias(a.m))
            elif a.call.fn == "bit_xor":  # x ^ x = 0: a value counts when held an odd number of times
                odd = v if a.call.distinct else v.filter(pl.col(WEIGHT) % 2 == 1)
                exprs.append(odd.bitwise_xor().alias(a.m))
            elif a.call.fn in BITWISE:
                exprs.append((v.bitwise_and() if a.call.fn == "bit_and" else v.bitwise_or()).alias(a.m))
            elif a.call.fn in MODES:  # (one row per value: the multiset is consolidated)
                top = v.sort_by([pl.col(WEIGHT), v], descending=[True, a.call.descending], nulls_last=True)
                exprs.append(top.first().alias(a.m))
            elif a.call.fn == "min":
                exprs.append(v.min().alias(a.m))
            elif a.call.fn == "max":
                # NaN is the largest float (Spark); polars' max would skip it.
                exprs.append((v.nan_max() if a.is_float else v.max()).alias(a.m))
            else:  # DISTINCT count / sum / avg count every value once; float SUM/AVG, all copies
                exprs += _sum_parts(a, v, pl.lit(1, dtype=pl.Int64) if a.call.distinct else pl.col(WEIGHT))
        if mset.height == 0 and self.gnames:
            # polars cannot type some list expressions over no groups: one NULL row of
            # weight 0 gives the columns their types, then goes
            one = pl.DataFrame([pl.Series(c.name, [None], dtype=c.dtype) for c in mset.get_columns()])
            return _group_agg(one.with_columns(pl.lit(0, dtype=pl.Int64).alias(WEIGHT)), self.gnames, exprs).head(0)
        return _group_agg(mset, self.gnames, exprs)

    def finalize(self, state: pl.DataFrame, sign: str | None = None) -> pl.DataFrame:
        """Per-group intermediate columns -> output rows c0.., w (SQL semantics); w is 1,
        or the state's column `sign` when it has one (+1/-1: new and old rows at once).

        Raises RuntimeSqlError on overflow of the result type (Spark ANSI).
        """
        direct = _finalize_directly(self, state, sign)
        if direct is not None:
            return direct
        outputs, checks = self._finalizers()
        weight = pl.lit(1, dtype=pl.Int64) if sign is None else pl.col(sign)
        flags = [check.alias(f"__chk{i}") for i, (check, _) in enumerate(checks)]
        lazy = state.lazy()
        if not self.is_global:
            lazy = lazy.filter(pl.col(_N) != 0)  # an empty group disappears (its checks are false)
        try:
            out = lazy.select([*outputs, weight.alias(WEIGHT), *flags]).collect()
        except pl.exceptions.PolarsError:
            out = None  # a value out of range: the checks below name it
        if out is None or any(out.get_column(f"__chk{i}").any() for i in range(len(checks))):
            for check, message in checks:
                if state.select(check.any()).item():
                    raise RuntimeSqlError(message)
            assert out is not None, "finalize failed without a failing check"
        return pl.DataFrame(out.get_columns()[: len(outputs) + 1])

    def _finalizers(self) -> tuple[list[pl.Expr], list[tuple[pl.Expr, str]]]:
        """The output columns c0.. (cast to the output types) and the overflow checks,
        built once per plan."""
        if self._finals is None:
            exprs: list[pl.Expr] = [pl.col(g) for g in self.gnames]
            checks: list[tuple[pl.Expr, str]] = []
            for a in self.aggs:
                expr, check = self._output(a)
                exprs.append(expr)
                if check is not None:
                    checks.append(check)
            outputs = [
                e.cast(polars_dtype(t)).alias(col_name(i))
                for i, (e, t) in enumerate(zip(exprs, self.out_types, strict=True))
            ]
            self._finals = (outputs, checks)
        return self._finals

    def _output(self, a: _Agg) -> tuple[pl.Expr, tuple[pl.Expr, str] | None]:
        fn, out = a.call.fn, a.out_type
        if fn == "count_star":
            return pl.col(_N), None
        k = pl.col(a.k).fill_null(0)
        if fn == "count":
            return k, None
        if fn in ("min", "max", *MOMENTS, *QUANTILES, *JOINS, *MODES, *BITWISE):
            return pl.col(a.m), None
        if fn in COLLECTS:  # no non-NULL value: an empty array (Spark), never NULL
            return pl.col(a.m).fill_null(pl.lit([], dtype=polars_dtype(out))), None
        some = k > 0
        if a.is_float:
            # Spark adds the values to a sum that starts at 0.0, so a sum of -0.0s is 0.0
            # (written as a test: polars may drop a `+ 0.0` as an identity)
            s = pl.when(pl.col(a.s) == 0.0).then(0.0).otherwise(pl.col(a.s))
            total = (
                pl.when((pl.col(a.nan) > 0) | ((pl.col(a.pinf) > 0) & (pl.col(a.ninf) > 0)))
                .then(float("nan"))
                .when(pl.col(a.pinf) > 0)
                .then(float("inf"))
                .when(pl.col(a.ninf) > 0)
                .then(float("-inf"))
                .otherwise(s)
            )
            value = total if fn == "sum" else total / k.cast(pl.Float64)
            return pl.when(some).then(value), None
        s = pl.col(a.s)  # exact: unscaled Int128 at in_scale
        if not out.is_decimal:
            as_float = s.cast(pl.Float64) / float(10**a.in_scale)
            if fn == "avg" or out.is_float:
                value = as_float / k.cast(pl.Float64) if fn == "avg" else as_float
                return pl.when(some).then(value), None
            if a.in_scale:  # exotic: decimal summed into an integer type, rounded half up
                s, _ = _rescale(s, 0, _i128(10**a.in_scale))
            lo, hi = INTEGER_BOUNDS[out.kind]
            bad = some & ((s < _i128(lo)) | (s > _i128(hi)))
            return pl.when(some).then(s), (bad, "integer overflow in SUM")
        # Decimal result: exact, rounded half up to the output scale.
        out_scale, limit = out.scale or 0, _i128(10 ** (out.precision or 38))
        up = max(0, out_scale - a.in_scale)
        down = _i128(10 ** max(0, a.in_scale - out_scale))
        den = down if fn == "sum" else down * pl.when(some).then(k).otherwise(1).cast(pl.Int128)
        unscaled, huge = _rescale(s, up, den)
        bad = some & (huge | (unscaled.abs() >= limit))
        name = "SUM" if fn == "sum" else "AVG"
        return (
            pl.when(some).then(unscaled_to_decimal(unscaled, out)),
            (bad, f"decimal overflow in {name}"),
        )


# Kinds whose numpy values order as SQL orders them (MIN/MAX by reduceat): integers, and
# dates and timestamps as datetime64 (and DECIMAL by its unscaled value, in `_extremes`).
_ORDERED_IN_NUMPY = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.Date, pl.Datetime)


def _extremes(plan: _Plan, arg: int, mset: pl.DataFrame) -> pl.DataFrame | None:
    """plan.mset_eval(arg, mset) for MIN/MAX alone over integers, decimals of up to 18
    digits, dates or timestamps, in numpy (polars' group-by costs ~0.5 ms a call, mostly
    its thread pool's): the multiset's rows grouped by `group_rows` and each group's
    extreme by reduceat. None (the caller's polars group-by) for other aggregates and
    kinds."""
    aggs = plan.mset_aggs[arg]
    if not plan.gnames or mset.height == 0 or any(a.call.fn not in ("min", "max") for a in aggs):
        return None
    values = mset.get_column(_v(arg))
    if values.null_count():
        return None
    if isinstance(values.dtype, pl.Decimal):
        # up to 18 digits the low word of the decimal128 is the unscaled value
        read = decimal_words(values) if (values.dtype.precision or 38) <= 18 else None
        if read is None:
            return None
        numbers = read[0][:, 0]
    elif isinstance(values.dtype, _ORDERED_IN_NUMPY):
        numbers = values.to_numpy()
    else:
        return None
    groups = group_rows(pick(mset, plan.gnames).get_columns())
    ordered = numbers[groups.order]
    sizes = np.diff(np.append(groups.starts, len(ordered)))
    columns = [take_series(mset.get_column(g), groups.reps) for g in plan.gnames]
    for a in aggs:
        extreme = (np.minimum if a.call.fn == "min" else np.maximum).reduceat(ordered, groups.starts)
        # each group's first row holding its extreme, whose value is gathered as it is
        hits = np.flatnonzero(ordered == np.repeat(extreme, sizes))
        first = hits[np.unique(np.searchsorted(groups.starts, hits, side="right") - 1, return_index=True)[1]]
        columns.append(take_series(values, groups.order[first]).alias(a.m))
    return pl.DataFrame(columns)


def _live(state: pl.DataFrame) -> pl.DataFrame:
    """The groups of `state` with rows (a gather, not a polars query)."""
    keep = state.get_column(_N).to_numpy() != 0
    return state if keep.all() else take(state, np.flatnonzero(keep))


def _add_aligned(plan: _Plan, old: pl.DataFrame, delta: pl.DataFrame) -> pl.DataFrame | None:
    """old + delta for state frames whose groups are distinct in each, and every old group
    also in delta (the old state was looked up by delta's groups): delta's rows, each
    plus its old row, found by group hash. None (the caller groups) otherwise."""
    if old.height == 0:
        return delta
    matched = _rows_of_groups(pick(old, plan.gnames).get_columns(), pick(delta, plan.gnames).get_columns())
    if matched is None or int(matched[1].sum()) != old.height:
        return None  # equal hashes or an old group not in delta
    # old row of each delta row, or the extra all-zero row appended at index old.height
    which = np.where(matched[1], matched[0], old.height)
    columns = [delta.get_column(g) for g in plan.gnames]
    for name, _ in plan.state_cols:
        before = old.get_column(name)
        padded = take_series(pl.concat([before, pl.Series(name, [0], dtype=before.dtype)]), which)
        columns.append((delta.get_column(name) + padded).alias(name))
    return pl.DataFrame(columns)


def _summable(a: _Agg) -> bool:
    """COUNT(*), COUNT(x), a SUM whose result keeps its input's scale (Spark: an integer
    SUM is BIGINT, a DECIMAL(p, s) SUM is DECIMAL(p + 10, s)), or an AVG of integers or
    decimals as a DOUBLE or a DECIMAL: a finalize from the group's count and sum alone
    (`_output_values`)."""
    fn, t, out = a.call.fn, a.in_type, a.out_type
    if fn in ("count_star", "count"):
        return True
    if fn not in ("sum", "avg") or t is None or a.is_float:
        return False
    if not (t.is_integer or t.is_decimal):
        return False
    if fn == "avg":
        return out.kind == "DOUBLE" or out.is_decimal
    if t.is_integer:
        return out.kind == "BIGINT"
    return out.is_decimal and (out.scale or 0) == a.in_scale


def _copied(a: _Agg) -> bool:
    """MIN or MAX of its input's type: a finalize that copies the group's extreme."""
    return a.call.fn in ("min", "max") and a.out_type == a.in_type


def _finalize_directly(plan: _Plan, state: pl.DataFrame, sign: str | None) -> pl.DataFrame | None:
    """plan.finalize(state, sign) for COUNTs, scale-keeping SUMs, exact AVGs, MIN and MAX,
    in numpy: a group's row is its counts, sums and extremes as they are, or its sum over
    its count. None (the caller's polars query decides, and raises the overflow error) for
    other aggregates, a sum outside int64, or a result out of its type's range."""
    if not all(_summable(a) or _copied(a) for a in plan.aggs):
        return None
    n = state.get_column(_N).to_numpy()
    rows = None if plan.is_global or bool(n.all()) else np.flatnonzero(n != 0)

    def take(values: np.ndarray) -> np.ndarray:
        return values if rows is None else values[rows]

    columns = [state.get_column(g) for g in plan.gnames]
    if rows is not None:
        columns = [take_series(c, rows) for c in columns]
    for a in plan.aggs:
        if a.call.fn == "count_star":
            columns.append(pl.Series(take(n), dtype=pl.Int64))
            continue
        if _copied(a):
            column = state.get_column(a.m)
            columns.append(column if rows is None else take_series(column, rows))
            continue
        k = take(state.get_column(a.k).fill_null(0).to_numpy())
        if a.call.fn == "count":
            columns.append(pl.Series(k, dtype=pl.Int64))
            continue
        wide = state.get_column(a.s)
        narrow = wide.cast(pl.Int64, strict=False)
        if narrow.null_count() != wide.null_count():
            return None  # a sum beyond int64
        values = _output_values(a, take(narrow.fill_null(0).to_numpy()), k)
        made = None if values is None else _value_column(a, values, k > 0)
        if made is None:
            return None
        columns.append(made)
    weight = (
        pl.Series(np.ones(len(n) if rows is None else len(rows), dtype=np.int64))
        if sign is None
        else pl.Series(take(state.get_column(sign).to_numpy()), dtype=pl.Int64)
    )
    frame = frame_of([c.alias(col_name(i)) for i, c in enumerate(columns)] + [weight.alias(WEIGHT)])
    if frame.dtypes[:-1] != [polars_dtype(t) for t in plan.out_types]:
        return None
    return frame


def _output_values(a: _Agg, s: np.ndarray, k: np.ndarray) -> np.ndarray | None:
    """A SUM's or an exact AVG's output per group from its int64 unscaled sums `s` and
    non-NULL counts `k`, as `_Plan._output` computes it (slots where k is 0 unspecified):
    a SUM is s; an AVG as a DOUBLE is (s / 10^scale) / k in float64, as a DECIMAL the
    quotient rounded half up to the output scale (`_rescale`), unscaled in int64. None
    when that quotient could leave int64 (the polars finalize then decides)."""
    if a.call.fn == "sum":
        return s
    count = np.where(k > 0, k, 1)
    out = a.out_type
    if not out.is_decimal:
        return (s.astype(np.float64) / float(10**a.in_scale)) / count.astype(np.float64)
    if len(s) == 0:
        return s
    out_scale = out.scale or 0
    up = 10 ** max(0, out_scale - a.in_scale)
    down = 10 ** max(0, a.in_scale - out_scale)
    if down > _SUM_BOUND // up or int(count.max()) > _SUM_BOUND // (up * down):
        return None
    den = count * down
    q, r = np.divmod(np.abs(s), den)
    if int(q.max()) > _SUM_BOUND // up:
        return None
    frac = r * up  # r < den <= 2^62 / up
    half_up = (frac % den) * 2 >= den
    quotient: np.ndarray = np.sign(s) * (q * up + frac // den + half_up)
    return quotient


def _value_column(a: _Agg, values: np.ndarray, some: np.ndarray) -> pl.Series | None:
    """A SUM's or an AVG's output column from `_output_values` (NULL where `some` is
    False); None where `_sum_column` is."""
    if values.dtype.kind != "f":
        return _sum_column(values, some, a.out_type)
    column = pl.Series("", values, dtype=pl.Float64)
    return column.scatter(np.flatnonzero(~some), None) if not some.all() else column


def _sum_column(sums: np.ndarray, some: np.ndarray, out: SqlType) -> pl.Series | None:
    """A SUM's output column from int64 unscaled sums (NULL where `some` is False): BIGINT,
    or DECIMAL built on its decimal128 words. None for a decimal out of its precision
    (the polars finalize then raises the overflow error)."""
    if not out.is_decimal:
        column = int64_series("", sums)
        return column.scatter(np.flatnonzero(~some), None) if not some.all() else column
    if (out.precision or 38) <= 18 and bool((np.abs(sums[some]) >= 10 ** (out.precision or 38)).any()):
        return None
    return decimal_of_int64("", sums, some, out.precision or 38, out.scale or 0)


_SIGN = "__sign"


def _signed(state: pl.DataFrame, sign: int) -> pl.DataFrame:
    """`state` with the column _SIGN holding `sign` (the weight of its finalized rows)."""
    return state.hstack([pl.Series(_SIGN, np.full(state.height, sign, dtype=np.int64))])


def _mset_of(plan: _Plan, arg: int, work: pl.DataFrame) -> pl.DataFrame:
    """The (group.., value, w) rows of `arg` that carry weight; NULL values never count."""
    rows = pick(work, [*plan.gnames, _v(arg), WEIGHT])
    values = rows.get_column(_v(arg))
    if not values.null_count():
        return rows
    return take(rows, np.flatnonzero(values.is_not_null().to_numpy()))


def _renamed_mset(plan: _Plan, arg: int, stored: pl.DataFrame) -> pl.DataFrame:
    """Rows c0.., w of arg's multiset trace as (group.., value, w)."""
    g = len(plan.gnames)
    return pick(stored, [*(col_name(i) for i in range(g + 1)), WEIGHT], [*plan.gnames, _v(arg), WEIGHT])


def _positive_values(rows: pl.DataFrame) -> pl.DataFrame:
    """(group.., value, w) rows consolidated, keeping the values present (weight > 0)."""
    if rows.height == 0:
        return rows
    groups = group_rows(rows.get_columns()[:-1])
    weights = groups.sums(rows.get_column(WEIGHT).to_numpy())
    keep = weights > 0
    return take_weighted(rows, groups.reps[keep], weights[keep])


def aggregate(
    batch: ZSet,
    group: Sequence[int],
    aggs: Sequence[AggCall],
    out_types: Sequence[SqlType],
    is_global: bool,
) -> ZSet:
    """Full (non-incremental) GROUP BY over a positive batch: Agg(G_p(batch)), §7.3-7.4.

    A global aggregate (no GROUP BY) yields exactly one row, even for empty input.
    """
    plan = _Plan(batch.types, group, aggs, out_types, is_global)
    work = plan.work(batch.frame.filter(pl.col(WEIGHT) != 0))
    state = plan.linear_state(work)
    for arg in plan.mset_aggs:
        values = _positive_values(_mset_of(plan, arg, work))
        state = _join_groups(state, plan.mset_eval(arg, values), plan.gnames)
    return ZSet(plan.finalize(state), plan.out_types)


class IncrementalAggregate:
    """(↑Agg ∘ G_p)^Δ = D ∘ ↑Agg ∘ G_p ∘ I (§7.4), evaluated on the touched groups only.

    State: the linear per-group running sums (Trace keyed by group), one value
    multiset per column that MIN/MAX/DISTINCT aggregate (Trace of (group.., value)
    keyed by group). The rows emitted for a group are a function of its state, so the
    next change retracts them by re-finalizing the old state, except where the emitted
    rows are kept (a third trace): float SUM/AVG, whose re-summed bits may differ, and
    MIN/MAX alone, whose old extremes they give. `step` reads state only; its `commit`
    writes it.
    """

    def __init__(
        self,
        input_types: Sequence[SqlType],
        group: Sequence[int],
        aggs: Sequence[AggCall],
        out_types: Sequence[SqlType],
        is_global: bool,
    ) -> None:
        self._plan = _Plan(input_types, group, aggs, out_types, is_global)
        p = self._plan
        gkey = tuple(range(len(p.group)))
        self._state = Trace(p.state_types, gkey)
        self._msets = {arg: Trace([*p.group_types, p.input_types[arg]], gkey) for arg in p.mset_aggs}
        # A float SUM/AVG recomputed from the multiset can differ in its last bits from
        # the value emitted before (summation order), so those groups keep the rows they
        # emitted, to retract exactly them.
        floating = any(a.call.fn in ("sum", "avg") and a.is_float for a in p.aggs)
        # MIN/MAX alone: the emitted rows hold each group's old extremes, so a step reads
        # them, not the groups' whole multisets (`_extremum_values`). Those rows are a
        # function of the state, so a checkpoint without them is rebuilt (`restored`).
        self._extrema = bool(p.mset_aggs) and all(
            a.call.fn in ("min", "max") and a.out_type == a.in_type for aggs in p.mset_aggs.values() for a in aggs
        )
        keep_out = floating or self._extrema
        self._floating = floating
        self._out: Trace | None = self._empty_out() if keep_out else None
        # MIN/MAX alone over values ordered as int64: each multiset again, ordered by value
        # (extrema_index.py), so deleting an extreme does not read its whole group; loaded
        # from the trace at first use, for the args still in `_indexed`.
        self._indexes: dict[int, ExtremaIndex] = {}
        # While an index serves, its multiset trace is read only by checkpoints and after a
        # drop: the changes wait here and reach it in batches (`_fold`), each run made and
        # merged once for many steps.
        self._unfolded: dict[int, list[pl.DataFrame]] = {}
        self._indexed = {
            arg for arg in p.mset_aggs if self._extrema and ExtremaIndex.supports(p.group_types, p.input_types[arg])
        }
        self._started = False
        # While every argument's index serves, the old extremes come from the indexes too:
        # the emitted rows are not kept (`_out` stays empty; rebuilt if an index is dropped).
        self._out_unkept = self._out_served()
        # COUNTs and scale-keeping SUMs by group: a step can run on int64 arrays (_step_linear)
        self._linear_only = bool(p.gnames) and not p.mset_aggs and all(_summable(a) for a in p.aggs)
        # ... whose sums then live in a compiled table, read and added to in place; the
        # trace hears of them when read (traces()). So do the linear parts of a grouped
        # aggregate that also has multisets (MIN/MAX, DISTINCT), whose general step then
        # reads its groups' old and new states from the table (`_table_states`). None: the
        # trace alone, as for every other aggregate, and for good once a step cannot use it.
        self._layout = _linear_layout(p)  # the table's sums after the row count
        self._groups: GroupSums | None = None
        summable = bool(p.gnames) and all(_summable(a) for a in p.aggs if a.linear)
        if summable and GroupSums.supports(p.group_types):
            self._groups = GroupSums(p.group_types, 1 + len(self._layout))

    def state_rows(self) -> int:
        self._fold_all()
        out = len(self._out) if self._out is not None else 0
        state = len(self._groups) if self._groups is not None else len(self._state)
        return state + sum(len(t) for t in self._msets.values()) + out

    def state_bytes(self) -> int:
        self._fold_all()
        held = sum(i.nbytes() for i in self._indexes.values())
        held += self._groups.nbytes() if self._groups is not None else 0
        # (the traces as they are: a sync would only move the table's groups into them)
        return sum(t.nbytes() for t in self._traces().values()) + held

    def traces(self) -> dict[str, Trace]:
        """Every piece of state, by a stable name (for checkpoints), up to date."""
        self._fold_all()
        if self._groups is not None:
            self._groups.sync(self._state, self._linear_state_frame)
        return self._traces()

    def _traces(self) -> dict[str, Trace]:
        traces = {"state": self._state, **{f"values{arg}": t for arg, t in self._msets.items()}}
        return traces | ({"out": self._out} if self._out is not None else {})

    def _linear_state_frame(self, keys: list[pl.Series], sums: np.ndarray) -> pl.DataFrame:
        """The state trace's rows of some groups from their sums in the table's layout."""
        held = _layout_sums(self._layout, sums)
        return _linear_state(self._plan, keys, held.n, held.k, held.s)

    def _drop_groups(self) -> None:
        """Leave the table for the trace, for good (a step the table cannot take)."""
        if self._groups is not None:
            self._groups.sync(self._state, self._linear_state_frame)
            self._groups = None

    @property
    def started(self) -> bool:
        """Whether a step has been committed (a global aggregate emits its row at the first)."""
        return self._started

    def meta(self) -> bool:
        return self._started

    def restored(self, meta: object) -> None:
        self._started = bool(meta)
        self._indexes.clear()  # reloaded from the refilled traces at the next step
        self._unfolded.clear()  # (older than the refilled traces)
        p = self._plan
        if self._groups is not None:
            self._groups = GroupSums(p.group_types, 1 + len(self._layout))
            if not self._load_groups(self._groups):
                self._groups = None
        self._out_unkept = self._out_served()
        if self._out_unkept:  # (rows a checkpoint kept are not read: drop them)
            self._out = self._empty_out()
            return
        if self._out is None or len(self._out) or not (len(self._state) or (p.is_global and self._started)):
            return
        # A checkpoint from before the emitted rows were kept (or made while they were not):
        # every live group (and a started global aggregate) has a row, so an empty trace
        # means "not saved".
        self._rebuild_out()

    def _out_served(self) -> bool:
        """Whether the emitted rows need not be kept: grouped MIN/MAX alone (no float sums),
        each argument served by its ordered index, which holds the old extremes as well.
        (Reading them from the kept rows and adding to those cost a fifth of a step.)"""
        p = self._plan
        return (
            self._extrema
            and not self._floating
            and bool(p.gnames)
            and self._out is not None
            and self._indexed == set(p.mset_aggs)
        )

    def _empty_out(self) -> Trace:
        """A trace for the emitted rows, by group; MIN/MAX's are rebuilt from the state
        when a checkpoint lacks them (`derived`)."""
        p = self._plan
        return Trace(p.out_types, tuple(range(len(p.group))), derived=self._extrema)

    def _rebuild_out(self) -> None:
        """The emitted rows, from the state and the multisets (O(state): a restore from a
        checkpoint made before they were kept, or an index dropped)."""
        p = self._plan
        self._out = self._empty_out()
        self._fold_all()
        if self._groups is not None:
            self._groups.sync(self._state, self._linear_state_frame)
        state = p.from_trace_frame(self._state.snapshot().frame)
        if state.height == 0:
            state = p.linear_state(p.work(ZSet.empty(p.input_types).frame))
        for arg, trace in self._msets.items():
            stored = _renamed_mset(p, arg, trace.snapshot().frame)
            state = _join_groups(state, p.mset_eval(arg, _positive_values(stored)), p.gnames)
        self._out.insert(ZSet(p.finalize(state), p.out_types))

    def _old_extremes(self, arg: int, old: pl.DataFrame) -> pl.DataFrame | None:
        """`old` (groups' old states) with arg's MIN/MAX columns as they were before the
        change, from its index (the commit has not applied it); None if keys cannot be held."""
        index = self._indexes.get(arg)
        p = self._plan
        want = None if index is None else index.keys([old.get_column(g) for g in p.gnames], old.height)
        if index is None or want is None:
            return None
        none = np.empty(0, dtype=np.int64)
        has, lo, hi = index.index.extremes(want, np.empty((0, want.shape[1]), dtype=np.int64), none, none)
        return old.hstack([index.series(a.m, lo if a.call.fn == "min" else hi, has) for a in p.mset_aggs[arg]])

    def _fetch(self, trace: Trace, keys: pl.DataFrame) -> pl.DataFrame:
        """The stored rows of the touched groups (for a global aggregate: all of them)."""
        if not self._plan.gnames:
            return trace.snapshot().frame
        return trace.lookup(keys, self._plan.gnames)

    def step(self, delta: ZSet) -> tuple[ZSet, Callable[[], None]]:
        """The output change for input change `delta`, and the closure that commits it.

        Old rows of touched groups are retracted (-1) and their new rows inserted (+1);
        an unchanged group cancels out. Nothing is mutated until commit() runs.
        """
        p = self._plan
        d = delta if delta.types == p.input_types else ZSet.from_frame(delta.frame, p.input_types)
        if self._msets or self._out is not None:
            d = d.consolidate()  # linear parts are sums: they need no consolidated input
        first = not self._started
        if d.frame.height == 0 and not (first and p.is_global):
            return ZSet.empty(p.out_types), self._mark_started
        if self._out_unkept and not self._out_served():  # an index was dropped
            self._rebuild_out()
            self._out_unkept = False
        work = p.work(d.frame)
        if self._linear_only:
            fast = self._step_linear(work)
            if fast is not None:
                return fast
            # the general path reads the trace: it hears of the table's groups first, and
            # the table is left for good (a sum past its int64 bounds, say)
            self._drop_groups()
        keys = work  # the lookups read its group columns and deduplicate them

        read = self._table_states(self._groups, work) if self._groups is not None and not self._linear_only else None
        if read is not None:
            old_state, new_state, add_to_table = read
        else:
            self._drop_groups()  # (the trace is read: it hears of the table's groups first)
            add_to_table = None
            stored = old_state = p.from_trace_frame(self._fetch(self._state, keys))
            if p.is_global and old_state.height == 0 and not first:
                # an empty global group is not stored, but its row (COUNT 0) was emitted
                old_state = p.linear_state(work.head(0))
            new_state = p.add_states([old_state, p.linear_state(work)])

        # (a group left without rows has no output row, nor multiset values to attach)
        merged, old_merged = (_live(new_state) if p.gnames else new_state), old_state
        old_out = self._fetch(self._out, keys) if self._out is not None and not self._out_unkept else None
        mset_deltas: list[tuple[int, Trace, pl.DataFrame]] = []
        index_changes: list[tuple[int, _IndexChange]] = []
        for arg, trace in self._msets.items():
            dm = _mset_of(p, arg, work)
            indexed = self._indexed_extremes(arg, merged, dm) if arg in self._indexed else None
            if indexed is not None:
                merged, change = indexed
                if old_out is None and old_state.height:  # the emitted rows are not kept
                    old = self._old_extremes(arg, old_merged)
                    if old is None:
                        self._fold(arg)
                        old_m = _renamed_mset(p, arg, self._fetch(trace, keys))
                        old = _join_groups(old_merged, p.mset_eval(arg, old_m), p.gnames)
                    old_merged = old
                mset_deltas.append((arg, trace, dm))
                index_changes.append((arg, change))
                continue
            values = None
            if self._extrema and old_out is not None:
                values = self._extremum_values(arg, trace, dm, old_out)
            if values is None:
                old_m = _renamed_mset(p, arg, self._fetch(trace, keys))
                values = _positive_values(concat_frames([old_m, dm]))
                if old_out is None and old_state.height:
                    old_merged = _join_groups(old_merged, p.mset_eval(arg, old_m), p.gnames)
            merged = _join_groups(merged, p.mset_eval(arg, values), p.gnames)
            mset_deltas.append((arg, trace, dm))

        # Without kept rows, the rows emitted before are a function of the old state: one
        # finalize evaluates the new rows (+1) and the old (-1) together. It may raise:
        # nothing is mutated yet.
        if old_out is not None:
            new_out = ZSet(p.finalize(merged), p.out_types)
            out_delta = ZSet.concat([new_out, ZSet(old_out, p.out_types).negate()], p.out_types).consolidate()
        elif old_state.height:
            both = concat_frames([_signed(merged, 1), _signed(old_merged, -1)])
            out_delta = ZSet(p.finalize(both, _SIGN), p.out_types).consolidate()
        else:
            out_delta = ZSet(p.finalize(merged), p.out_types)

        state_change = None
        if add_to_table is None:
            state_change = concat_frames([p.to_trace_frame(stored, -1), p.to_trace_frame(_live(new_state), 1)])

        def commit() -> None:
            if state_change is None:
                assert add_to_table is not None
                add_to_table()
            else:
                self._state.insert(ZSet(state_change, tuple(p.state_types)))
            served = {arg for arg, _ in index_changes}
            for arg, trace, dm in mset_deltas:
                renamed = pick(dm, dm.columns, [*(col_name(i) for i in range(dm.width - 1)), WEIGHT])
                if arg in served:
                    self._unfolded.setdefault(arg, []).append(renamed)
                else:
                    trace.insert(ZSet(renamed, trace.types))
            if self._out is not None and not self._out_unkept:
                self._out.insert(out_delta)
            for arg, change in index_changes:
                index = self._indexes.get(arg)
                if index is not None and not index.index.apply(*change):
                    self._drop_index(arg)  # (its trace hears of every change first)
                elif sum(f.height for f in self._unfolded.get(arg, ())) > max(_FOLD_ROWS, len(self._msets[arg]) // 8):
                    self._fold(arg)
            self._started = True

        return out_delta, commit

    def _table_states(
        self, table: GroupSums, work: pl.DataFrame
    ) -> tuple[pl.DataFrame, pl.DataFrame, Callable[[], None]] | None:
        """The touched groups' linear states before and after the change (`old_state`,
        `new_state` of the general step) from the compiled table, in one call instead of a
        probe of the state trace and a sum, and the commit that adds to the table; None
        (the caller leaves the table for the trace) where `_step_table` would leave it."""
        p = self._plan
        read = _exact_batch(p, work)
        got = None if read is None else self._table_read(table, work, read)
        if got is None:
            return None
        keys, old, delta, held, add = got
        new = _added(old, delta)
        had = np.flatnonzero(held)
        old_state = p.from_trace_frame(
            _linear_state(
                p,
                [take_series(k, had) for k in keys],
                old.n[had],
                {i: v[had] for i, v in old.k.items()},
                {i: v[had] for i, v in old.s.items()},
            )
        )
        new_state = p.from_trace_frame(_linear_state(p, keys, new.n, new.k, new.s))
        return old_state, new_state, add

    def _table_read(
        self, table: GroupSums, work: pl.DataFrame, read: _Exact
    ) -> tuple[list[pl.Series], _Sums, _Sums, np.ndarray, Callable[[], None]] | None:
        """The batch's rows grouped and the touched groups' sums read in one call
        (`GroupSums.gather`): the groups' key columns, their sums and the change's, which
        of them the table held, and the commit that adds the change to the table. None
        when a key has no int64 image or a sum nears int64's end."""
        p = self._plan
        rows = table.keys([work.get_column(g) for g in p.gnames])
        if rows is None:
            return None
        reps, deltas, held, sums = table.gather(rows, _row_parts(self._layout, read))
        if bool((np.abs(sums) >= _SUM_BOUND).any()):
            return None
        keys = [take_series(work.get_column(g), reps) for g in p.gnames]
        old, delta = _layout_sums(self._layout, sums), _layout_sums(self._layout, deltas)
        removed = int((held & (old.n + delta.n == 0)).sum())
        touched = rows[reps]

        def add() -> None:
            table.add(touched, deltas, removed)
            if table.backlogged():
                table.sync(self._state, self._linear_state_frame)

        return keys, old, delta, held, add

    def _index(self, arg: int) -> ExtremaIndex | None:
        """arg's ordered index, loaded from its multiset trace on first use."""
        if arg in self._indexes:
            return self._indexes[arg]
        p = self._plan
        index = ExtremaIndex(p.group_types, p.input_types[arg])
        self._fold(arg)
        stored = self._msets[arg].snapshot().frame
        g = len(p.gnames)
        if stored.height and not index.load(
            [stored.get_column(col_name(i)) for i in range(g)],
            stored.get_column(col_name(g)),
            stored.get_column(WEIGHT).to_numpy(),
        ):
            self._drop_index(arg)
            return None
        self._indexes[arg] = index
        return index

    def _fold(self, arg: int) -> None:
        """Bring arg's multiset trace up to date with the changes waiting for it."""
        frames = self._unfolded.pop(arg, None)
        if frames:
            trace = self._msets[arg]
            trace.insert(ZSet(concat_frames(frames), trace.types))

    def _fold_all(self) -> None:
        for arg in list(self._unfolded):
            self._fold(arg)

    def _drop_index(self, arg: int) -> None:
        # the multiset trace stays the state of record: the step reads it instead
        self._fold(arg)
        self._indexed.discard(arg)
        self._indexes.pop(arg, None)

    def _indexed_extremes(
        self, arg: int, merged: pl.DataFrame, dm: pl.DataFrame
    ) -> tuple[pl.DataFrame, _IndexChange] | None:
        """`merged` (the live touched groups) with arg's MIN/MAX columns attached, from
        its ordered index and the change `dm` (group.., value, w), and the change as the
        index's rows for the commit; None when the index cannot serve."""
        index = self._index(arg)
        if index is None:
            return None
        p = self._plan
        keys = index.keys([dm.get_column(g) for g in p.gnames], dm.height)
        values = index.values(dm.get_column(_v(arg)))
        want = index.keys([merged.get_column(g) for g in p.gnames], merged.height)
        if keys is None or values is None or want is None:
            self._drop_index(arg)
            return None
        weights = np.ascontiguousarray(dm.get_column(WEIGHT).to_numpy(), dtype=np.int64)
        has, lo, hi = index.index.extremes(want, keys, values, weights)
        columns = [index.series(a.m, lo if a.call.fn == "min" else hi, has) for a in p.mset_aggs[arg]]
        return merged.hstack(columns), (keys, values, weights)

    def _extremum_values(self, arg: int, trace: Trace, dm: pl.DataFrame, old_out: pl.DataFrame) -> pl.DataFrame | None:
        """Rows (group.., value) with the same MIN and MAX per touched group as the
        group's values after the change `dm`, read without the whole multisets of the
        groups; None when an exact count cannot be read (hash collision, NaN): the
        caller reads the multisets.

        The old extremes e come from the emitted rows `old_out`; each is anchored with
        its stored count beside the change, consolidated per (group, value). A value of
        positive net weight is present after the change (a count is never below 0).
        While a group's anchors all stay present, these present values hold its new
        extremes: a value beyond an old extreme was not stored, so its count is the
        change's. A group whose extreme is deleted is read whole, so deleting an
        extreme costs its group's size and any other change O(|Δ| log |state|).
        """
        p = self._plan
        g = len(p.gnames)
        names = [*p.gnames, _v(arg)]
        # One anchor per distinct non-NULL extreme of a row (MIN = MAX: once), for a
        # doubled anchor would count its stored rows twice.
        anchors: list[pl.DataFrame] = []
        earlier: list[pl.Series] = []
        for a in p.mset_aggs[arg]:
            e = old_out.get_column(col_name(g + a.index))
            keep = e.is_not_null().to_numpy() if e.null_count() else np.ones(len(e), dtype=bool)
            for other in earlier:
                keep &= (e != other).fill_null(True).to_numpy()
            earlier.append(e)
            rows = np.flatnonzero(keep)
            anchors.append(take(pick(old_out, [*(col_name(i) for i in range(g)), e.name], names), rows))
        anchor = stack(anchors)
        counts = trace.weights_of(pick(anchor, names, [col_name(i) for i in range(g + 1)]))
        if counts is None:
            return None
        is_anchor = np.concatenate([np.ones(anchor.height, dtype=np.int64), np.zeros(dm.height, dtype=np.int64)])
        both = stack([anchor.hstack([int64_series(WEIGHT, counts)]), dm])
        groups = group_rows(both.get_columns()[: g + 1])
        weights = groups.sums(both.get_column(WEIGHT).to_numpy())
        present = weights > 0
        lost = (groups.sums(is_anchor) > 0) & ~present
        values = take_weighted(both, groups.reps[present], weights[present])
        if not lost.any():
            return values
        # Both parts are subsets of the values present after the change, and the second
        # is all of them for the groups that lost an extreme, so their union has each
        # group's MIN and MAX (duplicates do not move them).
        old_m = _renamed_mset(p, arg, self._fetch(trace, take(both, groups.reps[lost])))
        return concat_frames([values, _positive_values(concat_frames([old_m, dm]))])

    def _load_groups(self, groups: GroupSums) -> bool:
        """Fill the table from the state trace (a restore); False when its sums do not
        fit the table (the trace alone serves then)."""
        p = self._plan
        stored = self._state.snapshot().frame
        sums = _stored_sums(p, stored, np.arange(stored.height, dtype=np.int64))
        if sums is None:
            return False
        keys = [stored.get_column(col_name(i)) for i in range(len(p.gnames))]
        return groups.load(keys, _layout_matrix(self._layout, sums))

    def _mark_started(self) -> None:
        self._started = True

    def _step_linear(self, work: pl.DataFrame) -> tuple[ZSet, Callable[[], None]] | None:
        """`step` for COUNTs and scale-keeping SUMs by group, on int64 arrays: the batch's
        groups summed (one hash of the group columns, one compiled sort), their stored
        rows found by those hashes in one probe of the state, old + new added per group,
        and the output rows (old -1, new +1; an unchanged row cancels) and the state's
        change built from the arrays. No polars query. None (the general path decides,
        and raises any overflow) for values or sums beyond int64, a result out of its
        type, or hashes shared by different groups."""
        p = self._plan
        if self._groups is not None:  # (None from the table: it has left for the trace)
            read = _exact_batch(p, work)
            if read is None:
                return None
            return self._step_table(self._groups, work, read) or self._step_linear(work)
        summed = _linear_arrays(p, work)
        if summed is None:
            return None
        groups, delta = summed
        assert groups.hashes is not None
        keys = [take_series(work.get_column(g), groups.reps) for g in p.gnames]
        aligned = self._state.lookup_aligned(keys, groups.hashes[groups.reps])
        if aligned is None:
            return None
        stored, at = aligned
        old = _stored_sums(p, stored, at)
        if old is None:
            return None
        new, unchanged = _added(old, delta), _unchanged(delta)
        had = (at >= 0) & ~unchanged
        live = (new.n != 0) & ~unchanged
        out = _linear_output(p, keys, old, new, had, live)
        if out is None:
            return None

        # The state's change: the touched groups' stored rows out, their new rows in.
        retract = at[had]
        kept = np.flatnonzero(live)
        born_state = _linear_state(
            p,
            [take_series(k, kept) for k in keys],
            new.n[kept],
            {i: v[kept] for i, v in new.k.items()},
            {i: v[kept] for i, v in new.s.items()},
        )
        gone_state = take_weighted(stored, retract, np.full(len(retract), -1, dtype=np.int64))
        change = concat_frames([gone_state, born_state])
        trace = self._state

        def commit() -> None:
            trace.insert(ZSet(change, tuple(p.state_types)))
            self._started = True

        return out, commit

    def _step_table(self, table: GroupSums, work: pl.DataFrame, read: _Exact) -> tuple[ZSet, Callable[[], None]] | None:
        """`_step_linear` on the compiled table: the batch's rows grouped and the touched
        groups' sums read in one call (`GroupSums.gather`), and added to in one at the
        commit. None after leaving the table for the trace (`_drop_groups`) when a key
        has no int64 image, a sum nears int64's end or the output cannot be built from
        the sums."""
        p = self._plan
        got = self._table_read(table, work, read)
        if got is None:
            self._drop_groups()
            return None
        keys, old, delta, held, add = got
        new, unchanged = _added(old, delta), _unchanged(delta)
        had = held & ~unchanged
        live = (new.n != 0) & ~unchanged
        out = _linear_output(p, keys, old, new, had, live)
        if out is None:
            self._drop_groups()
            return None

        def commit() -> None:
            add()
            self._started = True

        return out, commit


def _linear_layout(plan: _Plan) -> list[tuple[str, int]]:
    """The linear parts after the row count, in the state trace's column order: per
    aggregate other than COUNT(*), its non-NULL count ("k") and, for a SUM or AVG, its
    unscaled sum ("s"), with the aggregate's index."""
    layout = []
    for a in plan.aggs:
        if not a.linear or a.call.fn == "count_star":
            continue
        layout.append(("k", a.index))
        if a.needs_sum:
            layout.append(("s", a.index))
    return layout


def _layout_matrix(layout: list[tuple[str, int]], sums: _Sums) -> np.ndarray:
    """Sums as the table's rows: n, then the `layout`'s parts."""
    return np.stack([sums.n, *((sums.k if part == "k" else sums.s)[i] for part, i in layout)], axis=1)


def _layout_sums(layout: list[tuple[str, int]], matrix: np.ndarray) -> _Sums:
    """The table's rows (`_layout_matrix`) as sums."""
    sums = _Sums(matrix[:, 0], {}, {})
    for j, (part, i) in enumerate(layout, start=1):
        (sums.k if part == "k" else sums.s)[i] = matrix[:, j]
    return sums


def _added(old: _Sums, delta: _Sums) -> _Sums:
    new = _Sums(old.n + delta.n, {i: old.k[i] + k for i, k in delta.k.items()}, {})
    new.s.update({i: old.s[i] + s for i, s in delta.s.items()})
    return new


def _unchanged(delta: _Sums) -> np.ndarray:
    """Groups the change leaves as they were (every part's delta zero)."""
    unchanged = delta.n == 0
    for part in [*delta.k.values(), *delta.s.values()]:
        unchanged &= part == 0
    return unchanged


def _linear_output(
    plan: _Plan, keys: list[pl.Series], old: _Sums, new: _Sums, had: np.ndarray, live: np.ndarray
) -> ZSet | None:
    """The output rows of the touched groups: a group's row before (-1, where it `had`
    one) and after (+1, where it is `live`), from its sums alone; a group whose row did
    not change (a COUNT(x) of NULLs added, say) cancels out. None for a sum whose column
    cannot be built here, or rows not of the output's types."""
    p = plan
    same = had & live
    old_cols, new_cols = _output_arrays(p, old), _output_arrays(p, new)
    if old_cols is None or new_cols is None:
        return None
    for (vo, ko), (vn, kn) in zip(old_cols, new_cols, strict=True):
        same &= (ko == kn) & ((vo == vn) | ~ko)
    gone, born = np.flatnonzero(had & ~same), np.flatnonzero(live & ~same)
    rows = np.concatenate([gone, born])
    columns = [take_series(k, rows) for k in keys]
    for a, (vo, ko), (vn, kn) in zip(p.aggs, old_cols, new_cols, strict=True):
        values = np.concatenate([vo[gone], vn[born]])
        valid = np.concatenate([ko[gone], kn[born]])
        if a.call.fn in ("count_star", "count"):
            columns.append(int64_series("", values))
            continue
        column = _value_column(a, values, valid)
        if column is None:
            return None
        columns.append(column)
    sign = np.concatenate([np.full(len(gone), -1, dtype=np.int64), np.ones(len(born), dtype=np.int64)])
    out = frame_of([c.alias(col_name(i)) for i, c in enumerate(columns)] + [int64_series(WEIGHT, sign)])
    if out.dtypes[:-1] != [polars_dtype(t) for t in p.out_types]:
        return None
    return ZSet(out, p.out_types, consolidated=True)


def _linear_state(
    plan: _Plan, keys: list[pl.Series], n: np.ndarray, k: dict[int, np.ndarray], s: dict[int, np.ndarray]
) -> pl.DataFrame:
    """The state trace's rows (weight 1) of groups with these keys and linear parts."""
    state = [*keys, int64_series("", n)]
    for a in plan.aggs:
        if a.index in k:
            state.append(int64_series("", k[a.index]))
        if a.index in s:
            state.append(decimal_of_int64("", s[a.index], None, 38, 0))
    return frame_of(
        [c.alias(col_name(i)) for i, c in enumerate(state)] + [int64_series(WEIGHT, np.ones(len(n), dtype=np.int64))]
    )


def _stored_sums(plan: _Plan, stored: pl.DataFrame, at: np.ndarray) -> _Sums | None:
    """The stored linear parts of each group (`at`: its stored row, or -1 for none, which
    reads as zeros) as int64 arrays. None when a stored row's weight is not 1 or a sum is
    beyond the bound that keeps old + new inside int64."""
    m = len(at)
    has = at >= 0
    src = at[has]
    if stored.height and not bool((stored.get_column(WEIGHT).to_numpy() == 1).all()):
        return None

    def aligned(values: np.ndarray) -> np.ndarray:
        out = np.zeros(m, dtype=np.int64)
        out[has] = values[src]
        return out

    g = len(plan.gnames)
    names = [name for name, _ in plan.state_cols]
    column = {name: stored.get_column(col_name(g + i)) for i, name in enumerate(names)}
    if any(c.null_count() for c in column.values()):
        return None
    sums = _Sums(aligned(column[_N].to_numpy()), {}, {})
    for a in plan.aggs:
        if not a.linear or a.call.fn == "count_star":
            continue
        sums.k[a.index] = aligned(column[a.k].to_numpy())
        if a.needs_sum:
            read = decimal_words(column[a.s])
            if read is None:
                return None
            words = read[0]
            low = words[:, 0]
            if not bool((words[:, 1] == low >> 63).all()) or bool((np.abs(low) >= _SUM_BOUND).any()):
                return None
            sums.s[a.index] = aligned(low)
    if any(bool((np.abs(v) >= _SUM_BOUND).any()) for v in [sums.n, *sums.k.values()]):
        return None
    return sums


def _output_arrays(plan: _Plan, sums: _Sums) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Each aggregate's output per group from its sums, as (values, validity): COUNT(*)
    is n, COUNT(x) is k, a SUM or an AVG `_output_values` (int64, unscaled at the output
    scale, or float64), NULL without a non-NULL value. None where `_output_values` is."""
    always = np.ones(len(sums.n), dtype=bool)
    out = []
    for a in plan.aggs:
        if a.call.fn == "count_star":
            out.append((sums.n, always))
        elif a.call.fn == "count":
            out.append((sums.k[a.index], always))
        else:
            k = sums.k[a.index]
            values = _output_values(a, sums.s[a.index], k)
            if values is None:
                return None
            out.append((values, k > 0))
    return out


@evaluates(op.Aggregate)
def _aggregate(ctx: Context, o: op.Aggregate, args: list[Value]) -> Value:
    return aggregate(as_zset(args[0]), o.group, o.aggs, o.types, o.is_global)


def _aggregate_state(setup: Setup) -> IncrementalAggregate:
    o = setup.circuit[setup.node]
    assert isinstance(o, op.AggregateIncremental)
    src = setup.circuit[o.inputs[0]]
    return IncrementalAggregate(src.types, o.group, o.aggs, o.types, o.is_global)


@evaluates(op.AggregateIncremental, state=_aggregate_state, state_name="aggregate")
def _aggregate_incremental(ctx: Context, o: op.AggregateIncremental, args: list[Value]) -> Value:
    out, commit = ctx.state.step(as_zset(args[0]))
    ctx.commits.append(commit)
    return out

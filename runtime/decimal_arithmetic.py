"""Exact DECIMAL products and quotients, rounded once, half up (Spark 4).

Spark multiplies two decimals exactly and divides them to more digits than the result
keeps, then rounds half up to the result's scale. polars' 128-bit decimals cannot hold
every intermediate: a DECIMAL(38,18) × DECIMAL(38,18) product has 36 fractional digits
and up to 76 in all, and a quotient that fits its type can overflow on the way. Those
batches, and the rows of a polars quotient that land on a tie, are computed here on the
operands' unscaled integers as Python integers in numpy object arrays: exact at any
width, one numpy call per step of the formula, no Python loop per row.

(Arrow's 256-bit decimals were measured first: in pyarrow 26 their round and rescale
kernels get some values of more than ~45 digits wrong, so they are not used.)
"""

from __future__ import annotations

import decimal
import operator
from collections.abc import Callable

import numpy as np
import polars as pl

from dbspc.compiler.types import DECIMAL_CONTEXT, SqlType
from dbspc.runtime.zset import arrow_of, decimal_series, polars_dtype

_WORD = 1 << 64


def unscaled_to_decimal(unscaled: pl.Expr, t: SqlType) -> pl.Expr:
    """Int128 unscaled value at t's scale -> DECIMAL(t) holding the same digits."""
    scale = t.scale or 0
    as_dec = unscaled.cast(pl.Decimal(38, 0))
    if scale:
        unit = decimal.Decimal(1).scaleb(-scale)
        as_dec = as_dec * pl.lit(unit, dtype=pl.Decimal(38, scale))
    return as_dec.cast(polars_dtype(t))
_HALF_UP: str = "half_away_from_zero"


def _unscaled(s: pl.Series) -> np.ndarray:
    """The unscaled integers of a Decimal series (anything where NULL), as Python ints."""
    arr = arrow_of(s)
    words = np.frombuffer(arr.buffers()[1], dtype=np.uint64, count=2 * len(arr), offset=16 * arr.offset)
    words = words.reshape(-1, 2)
    return words[:, 1].view(np.int64).astype(object) * _WORD + words[:, 0].astype(object)


def _series(values: np.ndarray, valid: np.ndarray, t: SqlType, name: str) -> tuple[pl.Series, pl.Series]:
    """Unscaled integers at t's scale as a series of t, NULL with an overflow flag where
    they have more than t's precision."""
    precision, scale = t.precision or 38, t.scale or 0
    over = valid & (np.abs(values) >= 10**precision).astype(bool)
    keep = valid & ~over
    values = np.where(keep, values, 0)
    words = np.empty((len(values), 2), dtype=np.uint64)
    words[:, 0] = (values & (_WORD - 1)).astype(np.uint64)
    words[:, 1] = (values >> 64).astype(np.int64).view(np.uint64)
    return decimal_series(name, words, keep, precision, scale), pl.Series(over)


def _half_up(n: np.ndarray, d: np.ndarray | int) -> np.ndarray:
    """n / d (d non-zero) rounded half away from zero, in Python integers."""
    if isinstance(d, int):  # kept a Python int: numpy would make 10**19 a uint64
        d = np.full(len(n), d, dtype=object)
    negative = (n < 0) != (d < 0)
    an, ad = np.abs(n), np.abs(d)
    q = (2 * an + ad) // (2 * ad)
    return np.where(negative, -q, q)


def _valid(*series: pl.Series) -> np.ndarray:
    ok = np.ones(len(series[0]), dtype=bool)
    for s in series:
        ok &= s.is_not_null().to_numpy()
    return ok


def product(x: pl.Series, y: pl.Series, ta: SqlType, tb: SqlType, t: SqlType) -> tuple[pl.Series, pl.Series]:
    """x × y rounded half up to t (whose scale is at most s1 + s2), and where it overflows t."""
    valid = _valid(x, y)
    exact = _unscaled(x) * _unscaled(y)  # at scale s1 + s2
    drop = (ta.scale or 0) + (tb.scale or 0) - (t.scale or 0)
    return _series(_half_up(exact, 10**drop) if drop else exact, valid, t, x.name)


def quotient(x: pl.Series, y: pl.Series, ta: SqlType, tb: SqlType, t: SqlType) -> tuple[pl.Series, pl.Series]:
    """x / y rounded half up to t, and where it overflows t; y holds no zero (NULL there)."""
    valid = _valid(x, y)
    u, v = _unscaled(x), _unscaled(y)
    v = np.where(valid, v, 1)
    # x / y * 10^s = u * 10^(s + s2 - s1) / v
    shift = (t.scale or 0) + (tb.scale or 0) - (ta.scale or 0)
    n, d = (u * 10**shift, v) if shift >= 0 else (u, v * 10**-shift)
    return _series(_half_up(n, d), valid, t, x.name)


def polars_quotient(x: pl.Series, y: pl.Series, ta: SqlType, tb: SqlType, t: SqlType) -> tuple[pl.Series, pl.Series]:
    """x / y in polars where that is exact, else here.

    polars divides at the dividend's scale m, rounding half to even, in 128 bits. With
    m > s the quotient q' is within half a unit of its last place of the true one, so
    the half-up rounding of q' at s is the true one's unless q' is exactly a tie at s
    (…5000 below s): those rows, and rows polars could not compute (an intermediate past
    128 bits), are computed exactly."""
    s = t.scale or 0
    p1, s1 = ta.precision or 38, ta.scale or 0
    m = max(s1, s + min(6, 38 - (p1 - s1) - s))
    if m <= s:
        return quotient(x, y, ta, tb, t)
    try:
        q = x.cast(pl.Decimal(38, m)) / y
        # rounding may carry past q's integral digits: 0.99…9 in DECIMAL(38,38) rounds to 1
        rounded = q.round(s, mode=_HALF_UP)  # type: ignore[arg-type]
    except pl.exceptions.PolarsError:
        return quotient(x, y, ta, tb, t)
    value = rounded.cast(polars_dtype(t), strict=False)
    half = decimal.Decimal(5).scaleb(-(s + 1))
    redo = (x.is_not_null() & y.is_not_null() & q.is_null()) | ((q - rounded).abs() == half)
    overflow = rounded.is_not_null() & value.is_null()
    if redo.any():
        rows = redo.to_numpy()
        exact, exact_over = quotient(x.filter(redo), y.filter(redo), ta, tb, t)
        index = pl.Series(np.flatnonzero(rows))
        value = value.scatter(index, exact)
        overflow = overflow.scatter(index, exact_over)
    return value, overflow


_Exact = Callable[[decimal.Decimal, decimal.Decimal], decimal.Decimal]
# exact for these operands: a product of two 38-digit values has at most 76 digits
EXACT: dict[Callable[..., object], _Exact] = {
    operator.add: DECIMAL_CONTEXT.add,
    operator.sub: DECIMAL_CONTEXT.subtract,
    operator.mul: DECIMAL_CONTEXT.multiply,
}


def row_by_row(x: pl.Series, y: pl.Series, t: SqlType, op: _Exact) -> tuple[pl.Series, pl.Series]:
    """op per row in Python's decimal, exact, rounded half up to t; NULL and an overflow
    flag where that does not fit t (a sum whose 128-bit intermediate overflowed)."""
    precision, scale = t.precision or 38, t.scale or 0
    quantum = decimal.Decimal(1).scaleb(-scale)
    limit = decimal.Decimal(10).scaleb(precision - scale - 1)
    values: list[decimal.Decimal | None] = []
    overflow: list[bool] = []
    for u, v in zip(x.to_list(), y.to_list(), strict=True):
        r = None if u is None or v is None else op(u, v).quantize(quantum, context=DECIMAL_CONTEXT)
        too_large = r is not None and r.copy_abs() >= limit
        values.append(None if too_large else r)
        overflow.append(too_large)
    return pl.Series(x.name, values, dtype=polars_dtype(t)), pl.Series(overflow, dtype=pl.Boolean)

"""Vectorized kernels of the date and time functions (compiler/frontend/bind_datetime.py).

Each takes the evaluated arguments (polars expressions over a batch) and the typed call,
and returns the value expression; a NULL argument gives NULL. DATE is days since the
epoch and TIMESTAMP microseconds, so day arithmetic is integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from dbspc.compiler.logical.scalar import Call, Lit

Kernel = Callable[[list[pl.Expr], Call], pl.Expr]


def _constant(call: Call, i: int) -> str:
    arg = call.args[i]
    assert isinstance(arg, Lit) and isinstance(arg.value, str)
    return arg.value


def _dayofweek(x: pl.Expr) -> pl.Expr:
    """Spark: 1 = Sunday .. 7 = Saturday (polars: 1 = Monday .. 7 = Sunday)."""
    return x.dt.weekday().cast(pl.Int32) % 7 + 1


def _add_months(d: pl.Expr, n: pl.Expr) -> pl.Expr:
    """d + n months, the day clamped to the target month's last day (Spark's add_months)."""
    months = d.dt.year().cast(pl.Int64) * 12 + d.dt.month().cast(pl.Int64) - 1 + n.cast(pl.Int64)
    year, month = months // 12, months % 12 + 1
    first = pl.date(year, month, 1)
    day = pl.min_horizontal(d.dt.day().cast(pl.Int64), first.dt.month_end().dt.day().cast(pl.Int64))
    return pl.when(d.is_null() | n.is_null()).then(None).otherwise(pl.date(year, month, day))


def _date_trunc(args: list[pl.Expr], call: Call) -> pl.Expr:
    return args[0].dt.truncate(_constant(call, 1))


def _offset_by(args: list[pl.Expr], call: Call) -> pl.Expr:
    """x + a constant interval; month offsets clamp to the month's end, as Spark."""
    return args[0].dt.offset_by(_constant(call, 1))


KERNELS: dict[str, Kernel] = {
    "year": lambda a, c: a[0].dt.year().cast(pl.Int32),
    "month": lambda a, c: a[0].dt.month().cast(pl.Int32),
    "day": lambda a, c: a[0].dt.day().cast(pl.Int32),
    "quarter": lambda a, c: a[0].dt.quarter().cast(pl.Int32),
    "dayofweek": lambda a, c: _dayofweek(a[0]),
    "hour": lambda a, c: a[0].dt.hour().cast(pl.Int32),
    "minute": lambda a, c: a[0].dt.minute().cast(pl.Int32),
    "second": lambda a, c: a[0].dt.second().cast(pl.Int32),
    "date_add_days": lambda a, c: (a[0].cast(pl.Int32) + a[1].cast(pl.Int32)).cast(pl.Date),
    "datediff": lambda a, c: a[0].cast(pl.Int32) - a[1].cast(pl.Int32),
    "date_trunc": _date_trunc,
    "add_months": lambda a, c: _add_months(a[0], a[1]),
    "last_day": lambda a, c: a[0].dt.month_end(),
    "offset_by": _offset_by,
}

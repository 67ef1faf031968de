"""Vectorized kernels of the date and time functions (compiler/frontend/bind_datetime.py).

Each takes the evaluated arguments (polars expressions over a batch) and the typed call,
and returns the value expression; a NULL argument gives NULL. DATE is days since the
epoch and TIMESTAMP microseconds, so day arithmetic is integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import polars as pl

from dbspc.compiler.logical.scalar import Call, Lit
from dbspc.compiler.logical.time_zone import UNIT_MICROS, split_offset

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


def _from_utc(x: pl.Expr, zone: str) -> pl.Expr:
    """The wall-clock time in `zone` of the instant x (held as UTC)."""
    return x.dt.replace_time_zone("UTC").dt.convert_time_zone(zone).dt.replace_time_zone(None)


_GAP_STEP = pl.duration(hours=3)  # longer than any clock change


def _to_utc(local: pl.Expr, zone: str, ambiguous: Literal["earliest", "latest"] = "earliest") -> pl.Expr:
    """The instant (as UTC) of the wall-clock time `local` in `zone`. A time the clock
    skips is moved forward by the gap (the offset before it applies, as java.time does);
    a time that occurs twice takes the `ambiguous` one."""

    def at(t: pl.Expr) -> pl.Expr:
        aware = t.dt.replace_time_zone(zone, ambiguous=ambiguous, non_existent="null")
        return aware.dt.convert_time_zone("UTC").dt.replace_time_zone(None)

    return pl.coalesce(at(local), at(local - _GAP_STEP) + _GAP_STEP)


_DAY_MICROS = UNIT_MICROS["d"]


def _zoned_offset_by(args: list[pl.Expr], call: Call) -> pl.Expr:
    """ts + a constant interval in the session's zone, as Spark adds one: months and whole
    days move the wall clock (keeping the offset ts had where the result occurs twice),
    the rest of a day-time interval is added to the instant."""
    x, offset, zone = args[0], _constant(call, 1), _constant(call, 2)
    split = split_offset(offset)
    assert split is not None, offset  # time_zone.py rewrites only offsets it reads
    amount, unit = split
    if unit == "mo":
        calendar, rest = offset, 0
    else:
        micros = amount * UNIT_MICROS[unit]
        days = abs(micros) // _DAY_MICROS * (1 if micros >= 0 else -1)  # toward zero, as Scala's `/`
        calendar, rest = f"{days}d", micros - days * _DAY_MICROS
    local = _from_utc(x, zone)
    instant = _keeping_offset(local.dt.offset_by(calendar), local, x, zone)
    return instant + pl.duration(microseconds=rest) if rest else instant


def _keeping_offset(moved: pl.Expr, local: pl.Expr, x: pl.Expr, zone: str) -> pl.Expr:
    """The instant of wall-clock time `moved`, derived from instant x (wall clock `local`):
    where it occurs twice, the one with x's offset if either has it (java.time's
    ZonedDateTime arithmetic), else the earlier."""
    earlier, later = _to_utc(moved, zone, "earliest"), _to_utc(moved, zone, "latest")
    return pl.when((moved - later) == (local - x)).then(later).otherwise(earlier)


def _zoned_trunc(args: list[pl.Expr], call: Call) -> pl.Expr:
    """date_trunc in the session's zone: to a minute, hour or day as java.time truncates
    the zoned time (keeping its offset); to a week, month, quarter or year, the start of
    that local date (Spark's two paths)."""
    x, unit, zone = args[0], _constant(call, 1), _constant(call, 2)
    local = _from_utc(x, zone)
    truncated = local.dt.truncate(unit)
    if unit in ("1m", "1h", "1d"):
        return _keeping_offset(truncated, local, x, zone)
    return _to_utc(truncated, zone)


KERNELS: dict[str, Kernel] = {
    "year": lambda a, c: a[0].dt.year().cast(pl.Int32),
    "month": lambda a, c: a[0].dt.month().cast(pl.Int32),
    "day": lambda a, c: a[0].dt.day().cast(pl.Int32),
    "quarter": lambda a, c: a[0].dt.quarter().cast(pl.Int32),
    "dayofyear": lambda a, c: a[0].dt.ordinal_day().cast(pl.Int32),
    "weekofyear": lambda a, c: a[0].dt.week().cast(pl.Int32),  # ISO weeks, as Spark
    "unix_seconds": lambda a, c: a[0].dt.epoch("us") // 1_000_000,  # rounded down, as Spark
    "timestamp_seconds": lambda a, c: (a[0] * 1_000_000).cast(pl.Datetime("us")),
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
    "from_utc": lambda a, c: _from_utc(a[0], _constant(c, 1)),
    "to_utc": lambda a, c: _to_utc(a[0], _constant(c, 1)),
    "zoned_offset_by": _zoned_offset_by,
    "zoned_trunc": _zoned_trunc,
}

"""Vectorized kernels of the date and time functions (compiler/frontend/bind_datetime.py).

Each takes the evaluated arguments (polars expressions over a batch) and the typed call,
and returns the value expression; a NULL argument gives NULL. DATE is days since the
epoch and TIMESTAMP microseconds, so day arithmetic is integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import polars as pl

from dbspc.compiler.logical.datetime_pattern import Piece, parse_pattern, parse_pieces
from dbspc.compiler.logical.scalar import Call, Lit
from dbspc.compiler.logical.time_zone import UNIT_MICROS, split_offset
from dbspc.runtime.math_functions import ieee_divide

Kernel = Callable[[list[pl.Expr], Call], pl.Expr]


def _constant(call: Call, i: int) -> str:
    arg = call.args[i]
    assert isinstance(arg, Lit) and isinstance(arg.value, str)
    return arg.value


def _dayofweek(x: pl.Expr) -> pl.Expr:
    """Spark: 1 = Sunday .. 7 = Saturday (polars: 1 = Monday .. 7 = Sunday)."""
    return x.dt.weekday().cast(pl.Int32) % 7 + 1


def _add_months_days(d: pl.Expr, n: pl.Expr) -> pl.Expr:
    """The day number of d + n months, the day clamped to the target month's last day
    (Spark's add_months), in integers: polars' date constructor fails on years far
    outside its range, where Spark's answer is a date or an overflow error."""
    months = d.dt.year().cast(pl.Int64) * 12 + d.dt.month().cast(pl.Int64) - 1 + n.cast(pl.Int64)
    year, month = months // 12, months % 12 + 1
    day = pl.min_horizontal(d.dt.day().cast(pl.Int64), _month_days(year, month))
    return _days_from_civil(year, month, day)


def _add_months(d: pl.Expr, n: pl.Expr) -> pl.Expr:
    days = _add_months_days(d, n)
    valid = d.is_not_null() & n.is_not_null() & days.is_between(*_I32)
    return pl.when(valid).then(days).otherwise(None).cast(pl.Int32).cast(pl.Date)


def _add_months_overflow(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Whether add_months' day number passes an INT (Spark: ARITHMETIC_OVERFLOW)."""
    return (~_add_months_days(args[0], args[1]).is_between(*_I32)).fill_null(False)


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


def _days_from_civil(y: pl.Expr, m: pl.Expr, d: pl.Expr) -> pl.Expr:
    """Days since 1970-01-01 of the proleptic Gregorian date y-m-d (Int64; any day number
    counts on from the month's first day), H. Hinnant's days_from_civil."""
    y, m, d = y.cast(pl.Int64), m.cast(pl.Int64), d.cast(pl.Int64)
    y = y - (m <= 2).cast(pl.Int64)
    era = y // 400  # floor division
    yoe = y - era * 400
    doy = (153 * (m + pl.when(m > 2).then(-3).otherwise(9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _month_days(y: pl.Expr, m: pl.Expr) -> pl.Expr:
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    long_months = m.is_in([1, 3, 5, 7, 8, 10, 12])
    return pl.when(m == 2).then(28 + leap.cast(pl.Int64)).when(long_months).then(31).otherwise(30)


_I32 = (-(2**31), 2**31 - 1)


def _date_fields_valid(y: pl.Expr, m: pl.Expr, d: pl.Expr) -> pl.Expr:
    """java.time's LocalDate.of accepts y-m-d (years within ±999999999)."""
    return (y.abs() <= 999_999_999) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= _month_days(y, m))


def _make_date_invalid(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Whether make_date(y, m, d) fails, for the problem `fields` (no such date) or
    `days` (a date whose day number is past an INT, but for the fields)."""
    y, m, d = (a.cast(pl.Int64) for a in args[:3])
    fields = _date_fields_valid(y, m, d)
    if _constant(call, 3) == "fields":  # (a NULL field makes the date NULL, whatever the others: day 0 too)
        return (~fields & _all_known([y, m, d])).fill_null(False)
    return (fields & ~_days_from_civil(y, m, d).is_between(*_I32)).fill_null(False)


def _all_known(args: list[pl.Expr]) -> pl.Expr:
    return pl.all_horizontal([a.is_not_null() for a in args])


def _make_date(args: list[pl.Expr], call: Call) -> pl.Expr:
    y, m, d = (a.cast(pl.Int64) for a in args)
    days = _days_from_civil(y, m, d)
    valid = _date_fields_valid(y, m, d) & days.is_between(*_I32)
    return pl.when(valid).then(days).otherwise(None).cast(pl.Int32).cast(pl.Date)


def _timestamp_parts(args: list[pl.Expr]) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """make_timestamp's (fields valid, seconds are 60 with a fraction, local microseconds
    as Int128) of (y, mo, d, h, mi, sec DECIMAL(16,6))."""
    y, mo, d, h, mi = (a.cast(pl.Int64) for a in args[:5])
    total = (args[5] * 1_000_000).cast(pl.Int64)  # exact: the scale is 6
    seconds = total // 1_000_000
    micros = total - seconds * 1_000_000
    sixty = seconds == 60
    fraction = sixty & (micros != 0)
    time_ok = h.is_between(0, 23) & mi.is_between(0, 59) & (seconds.is_between(0, 59) | (sixty & (micros == 0)))
    valid = _date_fields_valid(y, mo, d) & time_ok
    day_seconds = _days_from_civil(y, mo, d).cast(pl.Int128) * 86_400 + h * 3600 + mi * 60 + seconds
    return valid, fraction, day_seconds * 1_000_000 + micros


_I64 = (-(2**63), 2**63 - 1)


def _make_timestamp_invalid(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Whether make_timestamp fails, for the problem `fraction` (60.5 seconds), `fields`
    (a field out of range) or `range` (past a TIMESTAMP's microseconds)."""
    valid, fraction, local = _timestamp_parts(args[:6])
    problem = _constant(call, 6)
    if problem == "fraction":
        bad = fraction
    elif problem == "fields":
        bad = ~valid & ~fraction
    else:
        bad = valid & ~local.is_between(*_I64)
    return (bad & _all_known(args[:6])).fill_null(False)  # (a NULL field makes it NULL, never an error)


def _make_timestamp(args: list[pl.Expr], call: Call) -> pl.Expr:
    valid, _, local = _timestamp_parts(args)
    ok = valid & local.is_between(*_I64)
    return pl.when(ok).then(local).otherwise(None).cast(pl.Int64).cast(pl.Datetime("us"))


_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def _named(x: pl.Expr, names: list[str], length: int | None) -> pl.Expr:
    """Text of a 1-based month or weekday number: the full name, or its first letters."""
    return x.replace_strict(
        list(range(1, len(names) + 1)), [n[:length] if length else n for n in names], return_dtype=pl.String
    )


def _digits(x: pl.Expr, width: int) -> pl.Expr:
    return x.cast(pl.String).str.zfill(width)


def _year(year: pl.Expr, count: int) -> pl.Expr:
    """y: as is; yy: the last two digits; yyy: at least 3 digits, a sign when negative;
    yyyy: at least 4, a sign when negative or beyond 4 digits (java.time's EXCEEDS_PAD)."""
    if count == 1:
        return year.cast(pl.String)
    magnitude = year.cast(pl.Int64).abs()
    if count == 2:
        return _digits(magnitude % 100, 2)
    plus = pl.lit("+") if count >= 4 else pl.lit("")  # past the width: EXCEEDS_PAD's sign
    sign = pl.when(year < 0).then(pl.lit("-")).when(magnitude >= 10**count).then(plus).otherwise(pl.lit(""))
    return pl.concat_str([sign, _digits(magnitude, count)])


def _field(x: pl.Expr, letter: str, count: int) -> pl.Expr:
    """One pattern field of the wall-clock time x (datetime_pattern.py's letters)."""
    if letter == "y":
        return _year(x.dt.year(), count)
    if letter == "M":
        month = x.dt.month()
        return _named(month, _MONTHS, 3 if count == 3 else None) if count >= 3 else _digits(month, count)
    if letter == "E":
        return _named(x.dt.weekday(), _DAYS, None if count == 4 else 3)
    if letter == "a":
        return pl.when(x.dt.hour() < 12).then(pl.lit("AM")).otherwise(pl.lit("PM"))
    if letter == "S":
        return _digits(x.dt.microsecond(), 6).str.slice(0, count)
    value = {
        "d": x.dt.day(), "D": x.dt.ordinal_day(), "H": x.dt.hour(), "h": (x.dt.hour().cast(pl.Int32) + 11) % 12 + 1,
        "m": x.dt.minute(), "s": x.dt.second(),
    }[letter]  # fmt: skip
    return _digits(value, count)


def _date_format(args: list[pl.Expr], call: Call) -> pl.Expr:
    x = args[0]
    parts = [pl.lit(p) if isinstance(p, str) else _field(x, *p) for p in parse_pattern(_constant(call, 1))]
    text = pl.concat_str(parts) if parts else pl.lit("")
    return pl.when(x.is_null()).then(pl.lit(None, pl.String)).otherwise(text)


def _literal_regex(text: str) -> str:
    """`text` matched as is (but for case): every character but a letter or digit escaped."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):X}}}" for c in text)


_NAMES_REGEX = {3: "|".join(m[:3] for m in _MONTHS), 4: "|".join(_MONTHS)}


def _field_regex(letter: str, count: int, before_number: bool) -> str:
    """What one field matches (java.time's strict parsing, as Spark's to_date parses)."""
    if letter == "y" and count == 4:  # EXCEEDS_PAD: 4 digits, a minus and 4 or more, a plus and 5 or more
        return "[0-9]{4}" if before_number else "[0-9]{4}|-[0-9]{4,}|[+][0-9]{5,}"
    if letter == "y" and count == 1:
        return "-?[0-9]+"
    if letter == "M" and count >= 3:
        return _NAMES_REGEX[count]
    if letter == "S":
        return f"[0-9]{{1,{count}}}"
    if letter == "a":
        return "am|pm"
    return "[0-9]+" if count == 1 else "[0-9]{2}"


def _parse_plan(pattern: str) -> tuple[str, list[tuple[str, int]]]:
    pieces: list[Piece] = parse_pieces(pattern)
    parts, fields = [], []
    for i, p in enumerate(pieces):
        if isinstance(p, str):
            parts.append(_literal_regex(p))
            continue
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        before_number = isinstance(nxt, tuple) and nxt[0] in "yMdHhmsS"
        parts.append(f"(?<{p[0]}>{_field_regex(*p, before_number)})")
        fields.append(p)
    return "^(?i:" + "".join(parts) + ")$", fields


def _parsed(s: pl.Expr, pattern: str) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(valid, days since the epoch, microseconds of the day) of the text s read by the
    pattern; missing fields are day 1 and time 0, as Spark's."""
    regex, fields = _parse_plan(pattern)
    groups = s.str.extract_groups(regex)
    counts = dict(fields)

    def number(letter: str, default: int) -> pl.Expr:
        if letter not in counts:
            return pl.lit(default, pl.Int64)
        return groups.struct.field(letter).str.strip_prefix("+").cast(pl.Int64, strict=False)

    matched = groups.struct.field(fields[0][0]).is_not_null()
    y = number("y", 1970)
    if counts.get("y") == 2:
        y = y + 2000
    if counts.get("M", 0) >= 3:
        names = _MONTHS if counts["M"] == 4 else [m[:3] for m in _MONTHS]
        text = groups.struct.field("M").str.to_lowercase()
        mo = text.replace_strict([n.lower() for n in names], list(range(1, 13)), default=None, return_dtype=pl.Int64)
    else:
        mo = number("M", 1)
    d = number("d", 1)
    if "h" in counts:
        h12 = number("h", 12)
        pm = groups.struct.field("a").str.to_lowercase() == "pm"
        h = h12 % 12 + pl.when(pm).then(12).otherwise(0)
        hour_ok = h12.is_between(1, 12)
    else:
        h = number("H", 0)
        hour_ok = h.is_between(0, 23)
    mi, sec = number("m", 0), number("s", 0)
    micros = pl.lit(0, pl.Int64)
    if "S" in counts:
        micros = groups.struct.field("S").str.pad_end(6, "0").cast(pl.Int64, strict=False)
    days = _days_from_civil(y, mo, d)
    valid = matched & _date_fields_valid(y, mo, d) & hour_ok & mi.is_between(0, 59) & sec.is_between(0, 59)
    return valid.fill_null(False), days, ((h * 60 + mi) * 60 + sec) * 1_000_000 + micros


def _parse_invalid(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Whether to_timestamp of the text fails (Spark: CANNOT_PARSE_TIMESTAMP): not of the
    pattern, a field out of range, or past a TIMESTAMP's range."""
    s = args[0]
    valid, days, micros = _parsed(s, _constant(call, 1))
    fits = (days.cast(pl.Int128) * 86_400_000_000 + micros).is_between(*_I64)
    return s.is_not_null() & ~(valid & fits)


def _parse(args: list[pl.Expr], call: Call) -> pl.Expr:
    """to_timestamp: the wall-clock time the text names, by a pattern."""
    valid, days, micros = _parsed(args[0], _constant(call, 1))
    total = days.cast(pl.Int128) * 86_400_000_000 + micros
    ok = valid & total.is_between(*_I64)
    return pl.when(ok).then(total).otherwise(None).cast(pl.Int64).cast(pl.Datetime("us"))


_MONTH_SECONDS = 31 * 86_400


def _months_between(args: list[pl.Expr], zone: str | None = None) -> pl.Expr:
    """Spark's months_between (DateTimeUtils.monthsBetween) before rounding: whole months
    when both days of the month are equal or both are their month's last; else the
    month difference plus the difference of day and time of day (whole seconds since the
    day's start, in the session's zone) over 31 days, in DOUBLE arithmetic as Spark's."""

    def split(x: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
        local = x if zone is None else _from_utc(x, zone)
        day = local.dt.date()
        start = day.cast(pl.Datetime("us"))
        if zone is not None:
            start = _to_utc(start, zone)
        seconds = (x - start).dt.total_microseconds() // 1_000_000
        months = day.dt.year().cast(pl.Int64) * 12 + day.dt.month().cast(pl.Int64)
        return months, day.dt.day().cast(pl.Int64), day == day.dt.month_end(), seconds

    m1, d1, last1, s1 = split(args[0])
    m2, d2, last2, s2 = split(args[1])
    month_diff = m1 - m2
    whole = (d1 == d2) | (last1 & last2)
    value = month_diff.cast(pl.Float64) + ieee_divide((d1 - d2) * 86_400 + s1 - s2, pl.lit(float(_MONTH_SECONDS)))
    return pl.when(whole).then(month_diff.cast(pl.Float64)).otherwise(value)


def _toward_zero(x: pl.Expr, divisor: int) -> pl.Expr:
    """x / divisor rounded toward zero, as Java's long division (polars' // rounds down)."""
    down = x // divisor
    return down + ((x < 0) & (down * divisor != x)).cast(pl.Int64)


def _next_day(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The first date after d on weekday `target` (polars' numbering, 1 = Monday)."""
    d, target = args[0], args[1]
    ahead = (target.cast(pl.Int32) - d.dt.weekday().cast(pl.Int32) + 6) % 7 + 1
    return (d.cast(pl.Int32) + ahead).cast(pl.Date)


_EPOCH_MILLIS = 9_223_372_036_854_775  # past these, the microseconds overflow a long


def _timestamp_millis(args: list[pl.Expr], call: Call) -> pl.Expr:
    n = args[0]
    fits = n.is_between(-_EPOCH_MILLIS, _EPOCH_MILLIS)  # a check raises on the others
    return (pl.when(fits).then(n).otherwise(None) * 1000).cast(pl.Datetime("us"))



# Functions that read a date's calendar through chrono, which reaches the years -262143 to
# 262142 and gives NULL past them: NULL from non-NULL arguments is such a date, where
# Spark (java.time) answers. runtime/expressions.py rejects the step on it.
CALENDAR_FIELDS = frozenset(
    "year month day quarter dayofyear weekofyear hour minute second monthname add_months".split()
)

KERNELS: dict[str, Kernel] = {
    "year": lambda a, c: a[0].dt.year().cast(pl.Int32),
    "month": lambda a, c: a[0].dt.month().cast(pl.Int32),
    "day": lambda a, c: a[0].dt.day().cast(pl.Int32),
    "quarter": lambda a, c: a[0].dt.quarter().cast(pl.Int32),
    "dayofyear": lambda a, c: a[0].dt.ordinal_day().cast(pl.Int32),
    "weekofyear": lambda a, c: a[0].dt.week().cast(pl.Int32),  # ISO weeks, as Spark
    "unix_seconds": lambda a, c: a[0].dt.epoch("us") // 1_000_000,  # rounded down, as Spark
    "unix_timestamp": lambda a, c: _toward_zero(a[0].dt.epoch("us"), 1_000_000),
    "timestamp_seconds": lambda a, c: (a[0] * 1_000_000).cast(pl.Datetime("us")),
    "dayofweek": lambda a, c: _dayofweek(a[0]),
    "hour": lambda a, c: a[0].dt.hour().cast(pl.Int32),
    "minute": lambda a, c: a[0].dt.minute().cast(pl.Int32),
    "second": lambda a, c: a[0].dt.second().cast(pl.Int32),
    "date_add_days": lambda a, c: (a[0].cast(pl.Int32) + a[1].cast(pl.Int32)).cast(pl.Date),
    "datediff": lambda a, c: a[0].cast(pl.Int32) - a[1].cast(pl.Int32),
    "date_trunc": _date_trunc,
    "add_months": lambda a, c: _add_months(a[0], a[1]),
    "add_months_overflow": _add_months_overflow,
    "last_day": lambda a, c: a[0].dt.month_end(),
    "offset_by": _offset_by,
    "from_utc": lambda a, c: _from_utc(a[0], _constant(c, 1)),
    "to_utc": lambda a, c: _to_utc(a[0], _constant(c, 1)),
    "zoned_offset_by": _zoned_offset_by,
    "zoned_trunc": _zoned_trunc,
    "make_date": _make_date,
    "make_date_invalid": _make_date_invalid,
    "make_timestamp": _make_timestamp,
    "parse_datetime": _parse,
    "parse_datetime_invalid": _parse_invalid,
    "make_timestamp_invalid": _make_timestamp_invalid,
    "date_format": _date_format,
    "months_between": lambda a, c: _months_between(a),
    "zoned_months_between": lambda a, c: _months_between(a, _constant(c, 2)),
    "next_day": _next_day,
    "weekday": lambda a, c: a[0].dt.weekday().cast(pl.Int32) - 1,  # 0 = Monday
    "dayname": lambda a, c: _named(a[0].dt.weekday(), _DAYS, 3),
    "monthname": lambda a, c: _named(a[0].dt.month(), _MONTHS, 3),
    "unix_date": lambda a, c: a[0].cast(pl.Int32),
    "date_from_unix_date": lambda a, c: a[0].cast(pl.Int32).cast(pl.Date),
    "unix_millis": lambda a, c: a[0].dt.epoch("us") // 1000,  # rounded down, as Spark
    "unix_micros": lambda a, c: a[0].dt.epoch("us"),
    "timestamp_millis": _timestamp_millis,
    "timestamp_micros": lambda a, c: a[0].cast(pl.Datetime("us")),
}

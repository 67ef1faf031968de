"""Spark's date and time functions and interval arithmetic, typed as Spark 4 types them.

Each rule receives the sqlglot node and `bind`, which binds a subexpression in the
caller's scope (so this module does not import the scalar binder). Timestamps are the
session's wall-clock time (dbspc has one time zone, the session's, like a Spark job).

- year, month, day/dayofmonth, quarter, dayofweek (1 = Sunday), hour, minute, second:
  INT; EXTRACT(field FROM x) for the same fields.
- date_add/date_sub(d, n), datediff(end, start): DATE and INT day arithmetic.
- date_trunc(unit, x): TIMESTAMP (weeks start on Monday); trunc(d, unit): DATE, NULL for
  units other than YEAR, QUARTER, MONTH and WEEK.
- add_months(d, n), last_day(d): DATE, clamped to the month's last day.
- DATE ± INTERVAL of days, months or years is a DATE; with hours, minutes or seconds, or
  on a TIMESTAMP, a TIMESTAMP (months clamp to the month's end, as add_months).
- current_date, current_timestamp and now are refused: a view's contents must be a
  function of its tables, and these change with the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from sqlglot import exp

from dbspc.compiler.errors import Span, SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import span_of, written_name
from dbspc.compiler.frontend.type_rules import TypeMismatch, coerce
from dbspc.compiler.logical.datetime_pattern import PatternError, parse_pattern, parse_pieces
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    STRING,
    TEMPORAL_KINDS,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    SqlType,
)

Bind = Callable[[exp.Expression], Scalar]
Rule = Callable[[exp.Expression, Bind], Scalar]

# EXTRACT's and date_part's fields, as Spark spells them (DatePart.parseExtractField)
_PARTS = {
    **dict.fromkeys(("year", "y", "years", "yr", "yrs"), "year"),
    **dict.fromkeys(("quarter", "qtr"), "quarter"),
    **dict.fromkeys(("month", "mon", "mons", "months"), "month"),
    **dict.fromkeys(("week", "w", "weeks"), "weekofyear"),
    **dict.fromkeys(("day", "d", "days"), "day"),
    **dict.fromkeys(("dayofweek", "dow"), "dayofweek"),
    "doy": "dayofyear",
    **dict.fromkeys(("hour", "h", "hours", "hr", "hrs"), "hour"),
    **dict.fromkeys(("minute", "m", "min", "mins", "minutes"), "minute"),
    **dict.fromkeys(("second", "s", "sec", "seconds", "secs"), "second"),
}
_TIME_PARTS = ("hour", "minute", "second")


def _temporal(x: Scalar, node: exp.Expression, want: str = "DATE") -> Scalar:
    """A DATE, TIMESTAMP or TIMESTAMP_NTZ operand; strings are cast as Spark casts them.
    (Functions of a DATE or a TIMESTAMP then cast a TIMESTAMP_NTZ as Spark does: to its
    date, or to the instant its wall clock names in the session's zone.)"""
    if x.type.is_temporal:
        return x
    if x.type.kind in ("STRING", "NULL"):
        return coerce(x, DATE if want == "DATE" else TIMESTAMP)
    raise SqlError(f"{written_name(node)} needs a DATE or TIMESTAMP, not {x.type}", span_of(node))


def _part(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        x = _temporal(bind(node.this), node, "TIMESTAMP" if fn in _TIME_PARTS else "DATE")
        if fn in _TIME_PARTS and x.type == DATE:
            x = coerce(x, TIMESTAMP)
        return Call(INT, fn, (x,))

    return rule


def _extract(node: exp.Expression, bind: Bind) -> Scalar:
    return _field_of(node, node.this.name, bind(node.expression), "EXTRACT")


def _field_of(node: exp.Expression, field: str, x: Scalar, what: str) -> Scalar:
    """EXTRACT(field FROM x) and date_part(field, x): INT, but SECOND (Spark: DECIMAL(8,6))."""
    fn = _PARTS.get(field.lower())
    if fn is None or fn == "second":
        raise UnsupportedSql(f"{what}({field.upper()} FROM ...) is not supported", span_of(node))
    x = _temporal(x, node, "TIMESTAMP" if fn in _TIME_PARTS else "DATE")
    return Call(INT, fn, (coerce(x, TIMESTAMP) if fn in _TIME_PARTS and x.type == DATE else x,))


def _date_part(node: exp.Expression, bind: Bind) -> Scalar:
    """date_part(field, x) / datepart(field, x): EXTRACT with the field as a constant string."""
    args = _arguments(node, 2)
    field = args[0]
    if not (isinstance(field, exp.Literal) and field.is_string):
        raise UnsupportedSql(
            f"{written_name(node)} needs a constant string field as its first argument", span_of(field)
        )
    return _field_of(node, field.name, bind(args[1]), written_name(node))


def _arguments(node: exp.Expression, *counts: int) -> list[exp.Expression]:
    """An anonymous call's arguments, refusing another number of them."""
    args = list(node.expressions)
    if len(args) not in counts:
        wanted = " or ".join(str(c) for c in counts)
        raise SqlError(f"{written_name(node)} takes {wanted} arguments, not {len(args)}", span_of(node))
    return args


def _int(x: Scalar, node: exp.Expression) -> Scalar:
    if not (x.type.is_integer or x.type.kind == "NULL") or x.type.kind == "BIGINT":
        raise SqlError(f"{written_name(node)} needs an INT number of days or months, not {x.type}", span_of(node))
    return coerce(x, INT)


def _date_add(node: exp.Expression, bind: Bind) -> Scalar:
    unit = node.args.get("unit")
    if unit is not None and unit.name.upper() not in ("DAY", "DAYS"):
        raise UnsupportedSql(f"DATE_ADD by {unit.name} is not supported", span_of(node))
    d = coerce(_temporal(bind(node.this), node), DATE)
    return Call(DATE, "date_add_days", (d, _int(bind(node.expression), node)))


def _datediff(node: exp.Expression, bind: Bind) -> Scalar:
    end = coerce(_temporal(bind(node.this), node), DATE)
    start = coerce(_temporal(bind(node.expression), node), DATE)
    return Call(INT, "datediff", (end, start))


_TRUNC_UNITS = {
    "YEAR": "1y", "YYYY": "1y", "YY": "1y", "QUARTER": "1q", "MONTH": "1mo", "MM": "1mo", "MON": "1mo",
    "WEEK": "1w", "DAY": "1d", "DD": "1d", "HOUR": "1h", "MINUTE": "1m", "SECOND": "1s",
    "MILLISECOND": "1ms", "MICROSECOND": "1us",
}  # fmt: skip
_DATE_TRUNC_UNITS = ("1y", "1q", "1mo", "1w")


def _unit(node: exp.Expression, arg: exp.Expression | None) -> str | None:
    """The truncation unit, which must be a constant; None for one Spark does not know."""
    if isinstance(arg, exp.Var | exp.Literal) or (isinstance(arg, exp.Column) and not arg.table):
        return _TRUNC_UNITS.get(arg.name.upper())
    raise UnsupportedSql(f"{written_name(node)} needs a constant unit", span_of(node))


def _date_trunc(node: exp.Expression, bind: Bind) -> Scalar:
    """date_trunc(unit, x): TIMESTAMP; sqlglot keeps the unit in `unit`."""
    unit = _unit(node, node.args.get("unit"))
    x = coerce(_temporal(bind(node.this), node, "TIMESTAMP"), TIMESTAMP)
    if unit is None:
        return Lit(TIMESTAMP, None)
    return Call(TIMESTAMP, "date_trunc", (x, Lit(STRING, unit)))


def _trunc(node: exp.Expression, bind: Bind) -> Scalar:
    """trunc(d, unit): DATE; NULL for units other than YEAR, QUARTER, MONTH, WEEK."""
    unit = _unit(node, node.args.get("unit"))
    d = coerce(_temporal(bind(node.this), node), DATE)
    if unit not in _DATE_TRUNC_UNITS:
        return Lit(DATE, None)
    return Call(DATE, "date_trunc", (d, Lit(STRING, unit)))


def _add_months(node: exp.Expression, bind: Bind) -> Scalar:
    """add_months(d, n): Spark casts any number or string n to INT as CAST does (1.5 is
    1, '2' is 2, 3000000000 fails), where date_add takes only the narrow integers."""
    d = coerce(_temporal(bind(node.this), node), DATE)
    n = bind(node.expression)
    if n.type.kind in ("BIGINT", "DECIMAL", "DOUBLE", "FLOAT", "STRING"):
        n = Call(INT, "cast", (n,))
    args = (d, _int(n, node))
    message = f"ARITHMETIC_OVERFLOW: {written_name(node)} of a date more than 2^31 days from 1970-01-01"
    bad = Call(BOOLEAN, "add_months_overflow", args)
    return Call(DATE, "error_if", (bad, Call(DATE, "add_months", args), Lit(STRING, message)))


def _last_day(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(DATE, "last_day", (coerce(_temporal(bind(node.this), node), DATE),))


def _parse_text(node: exp.Expression, x: Scalar, pattern: str | None, result: SqlType, raising: bool) -> Scalar:
    """to_date / to_timestamp (try_ forms: not raising) of x by a constant pattern: a
    string is parsed as Spark's strict java.time parser reads it (CANNOT_PARSE_TIMESTAMP
    where it cannot, only on the rows evaluated); a DATE or TIMESTAMP is cast."""
    if pattern is None:
        return Lit(result, None)
    if x.type.is_temporal:
        return coerce(x, result)
    if x.type.kind not in ("STRING", "NULL"):
        raise SqlError(f"{written_name(node)} needs a STRING, DATE or TIMESTAMP, not {x.type}", span_of(node))
    # Spark's to_date is the DATE of to_timestamp's instant (ParseToDate); a wall clock of
    # no zone is the text's own
    parsed = TIMESTAMP_NTZ if result == TIMESTAMP_NTZ else TIMESTAMP
    args = (coerce(x, STRING), Lit(STRING, pattern))
    value: Scalar = Call(parsed, "parse_datetime", args)
    if raising:
        message = f"CANNOT_PARSE_TIMESTAMP: {written_name(node)} of a text that does not match the pattern '{pattern}'"
        bad = Call(BOOLEAN, "parse_datetime_invalid", args)
        value = Call(parsed, "error_if", (bad, value, Lit(STRING, message)))
    return coerce(value, result)


def _checked_parse_pattern(node: exp.Expression, written: str, where: object) -> str:
    try:
        parse_pieces(written)
    except PatternError as e:
        exact = isinstance(where, tuple) and e.offset and "'" not in written  # no quote shifts the columns
        span = Span(where[0], where[1] + 1 + e.offset) if exact and isinstance(where, tuple) else None
        raise UnsupportedSql(
            f"{written_name(node)}: {e.message} (in the pattern '{written}')", span or span_of(node)
        ) from None
    return written


def _to_timestamp(node: exp.Expression, bind: Bind) -> Scalar:
    """to_timestamp(s, 'pattern'): the session's wall-clock time the text names."""
    return _parse_text(node, bind(node.this), _parse_pattern_of(node), TIMESTAMP, True)


def _parse_pattern_of(node: exp.Expression) -> str | None:
    """A parsing call's constant pattern as written (None: NULL)."""
    written = _written_pattern(node)
    if written is None:
        return None
    return _checked_parse_pattern(node, written, (node._meta or {}).get("format_at"))


def _written_pattern(node: exp.Expression) -> str | None:
    """A call's pattern argument as written (sqlglot rewrites it); None for NULL, and a
    positioned refusal for anything but a string literal."""
    fmt = node.args.get("format")
    if isinstance(fmt, exp.Null):
        return None
    written = (node._meta or {}).get("format_text")
    if not isinstance(written, str):
        raise UnsupportedSql(f"{written_name(node)} needs a constant string pattern", span_of(fmt) or span_of(node))
    return written


def _to_timestamp_ntz(node: exp.Expression, bind: Bind) -> Scalar:
    """to_timestamp_ntz(x[, 'pattern']): the wall clock a text names (by the pattern, or as
    CAST reads it), a DATE's midnight, or a TIMESTAMP's wall clock in the session's zone."""
    args = _arguments(node, 1, 2)
    x = bind(args[0])
    if len(args) == 1:
        if not (x.type.is_temporal or x.type.kind in ("STRING", "NULL")):
            raise SqlError(f"{written_name(node)} needs a STRING, DATE or TIMESTAMP, not {x.type}", span_of(node))
        return coerce(x, TIMESTAMP_NTZ)  # a text is read as a wall clock, never as an instant
    return _parse_text(node, x, _literal_pattern(node, args[1]), TIMESTAMP_NTZ, True)


def _literal_pattern(node: exp.Expression, fmt: exp.Expression) -> str | None:
    """An anonymous call's pattern argument: a string literal (None: NULL)."""
    if isinstance(fmt, exp.Null):
        return None
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise UnsupportedSql(f"{written_name(node)} needs a constant string pattern", span_of(fmt))
    meta = fmt._meta or {}
    where = (meta["line"], meta["col"] - (meta["end"] - meta["start"])) if "line" in meta else None
    return _checked_parse_pattern(node, fmt.name, where)


def _try_parse(result: SqlType) -> Rule:
    """try_to_date(s, fmt), try_to_timestamp(s, fmt): NULL where the text does not parse."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        args = _arguments(node, 2)
        return _parse_text(node, bind(args[0]), _literal_pattern(node, args[1]), result, False)

    return rule


def _to_date(node: exp.Expression, bind: Bind) -> Scalar:
    """to_date(x), also what sqlglot wraps around the argument of year(x) and friends."""
    if node.args.get("format") is not None:
        return _parse_text(node, bind(node.this), _parse_pattern_of(node), DATE, True)
    x = bind(node.this)
    if x.type.kind == "DATE":
        return x
    # sqlglot's own wrapper (year(x)) has no name of its own: the error names the call
    parent = node.parent
    added = isinstance(parent, exp.Func) and not (node._meta or {}).get("call_name")
    return coerce(_temporal(x, cast(exp.Expression, parent) if added else node), DATE)


_DEFAULT_PARSE = "yyyy-MM-dd HH:mm:ss"  # unix_timestamp's pattern when none is written


def _unix_timestamp(node: exp.Expression, bind: Bind) -> Scalar:
    """unix_timestamp(x[, pattern]) / to_unix_timestamp(...): whole seconds since the epoch,
    rounded toward zero (Spark: micros / 1000000, where unix_seconds rounds down), of a
    TIMESTAMP, a DATE (its midnight in the session's zone) or a string parsed by the
    pattern (yyyy-MM-dd HH:mm:ss unless written; CANNOT_PARSE_TIMESTAMP where it does not
    parse). The pattern is read for a string only."""
    x = bind(node.this) if node.this is not None else None
    if x is None or x.type.kind not in (*TEMPORAL_KINDS, "STRING", "NULL"):
        raise UnsupportedSql(
            f"{written_name(node)} is supported of one TIMESTAMP, DATE or STRING only (not of the current time)",
            span_of(node),
        )
    if x.type == TIMESTAMP_NTZ:  # Spark reads the wall clock as UTC here, not in the session's zone
        return Call(BIGINT, "unix_timestamp", (x,))
    if x.type.kind in ("DATE", "TIMESTAMP"):
        return Call(BIGINT, "unix_timestamp", (coerce(x, TIMESTAMP),))
    fmt = node.args.get("format")
    if isinstance(fmt, exp.Null):
        return Lit(BIGINT, None)
    if fmt is not None and span_of(fmt) is not None and not isinstance((node._meta or {}).get("format_text"), str):
        raise UnsupportedSql(f"{written_name(node)} needs a constant string pattern", span_of(fmt))
    written = (node._meta or {}).get("format_text")
    pattern = written if isinstance(written, str) else _DEFAULT_PARSE
    _checked_parse_pattern(node, pattern, (node._meta or {}).get("format_at"))
    return Call(BIGINT, "unix_timestamp", (_parse_text(node, x, pattern, TIMESTAMP, True),))


def _unix_seconds(node: exp.Expression, bind: Bind) -> Scalar:
    """unix_seconds(ts) of a TIMESTAMP (or a DATE): whole seconds since the epoch, rounded down."""
    x = bind(node.this) if node.this is not None else None
    if x is None or x.type.kind not in ("DATE", "TIMESTAMP", "NULL"):
        raise UnsupportedSql(f"{written_name(node)} is supported of one TIMESTAMP or DATE only", span_of(node))
    return Call(BIGINT, "unix_seconds", (coerce(x, TIMESTAMP),))


# Seconds past which a TIMESTAMP's microseconds overflow a long (Spark: DATETIME_OVERFLOW).
_EPOCH_SECONDS = 9_223_372_036_854
# the first seconds of the years 0001 and 10000 (from_unixtime formats the years between)
_YEAR_1, _YEAR_10000 = -62_135_596_800, 253_402_300_800
# from_unixtime's default format, as sqlglot reads it
_DEFAULT_UNIX_FORMAT = "%Y-%mstrict-%dstrict %Hstrict:%Mstrict:%Sstrict"


def _seconds_to_timestamp(x: Scalar, node: exp.Expression, low: int, high: int, message: str) -> Scalar:
    """The instant `x` whole seconds after the epoch, failing with `message` outside
    [low, high]."""
    if not (x.type.is_integer or x.type.kind == "NULL"):
        raise UnsupportedSql(
            f"{written_name(node)} of {x.type} is not supported; of an integer number of seconds only", span_of(node)
        )
    x = coerce(x, BIGINT)
    above, below = Call(BOOLEAN, "gt", (x, Lit(BIGINT, high))), Call(BOOLEAN, "lt", (x, Lit(BIGINT, low)))
    over = Call(BOOLEAN, "or", (above, below))
    return Call(TIMESTAMP, "error_if", (over, Call(TIMESTAMP, "timestamp_seconds", (x,)), Lit(STRING, message)))


def _timestamp_seconds(node: exp.Expression, bind: Bind) -> Scalar:
    args = node.expressions if isinstance(node, exp.Anonymous) else [node.this]
    if len(args) != 1:
        raise SqlError(f"{written_name(node)} takes one argument", span_of(node))
    message = f"DATETIME_OVERFLOW: {written_name(node)} of seconds past ±{_EPOCH_SECONDS} from the epoch"
    return _seconds_to_timestamp(bind(args[0]), node, -_EPOCH_SECONDS, _EPOCH_SECONDS, message)


def _from_unixtime(node: exp.Expression, bind: Bind) -> Scalar:
    """from_unixtime(n): the session's wall-clock time of n seconds after the epoch, as
    'yyyy-MM-dd HH:mm:ss' (the default format; other patterns are not supported)."""
    fmt = node.args.get("format")
    if fmt is not None and not (isinstance(fmt, exp.Literal) and fmt.name == _DEFAULT_UNIX_FORMAT):
        raise UnsupportedSql(
            f"{written_name(node)} with a format other than 'yyyy-MM-dd HH:mm:ss' is not supported", span_of(node)
        )
    message = (
        f"{written_name(node)} of a time outside the years 0001-9999: Spark writes such years with a sign "
        "(and wraps past ±9223372036854 seconds), which dbspc does not"
    )
    return coerce(_seconds_to_timestamp(bind(node.this), node, _YEAR_1, _YEAR_10000 - 1, message), STRING)


def _as_int(x: Scalar, node: exp.Expression) -> Scalar:
    """An INT argument: Spark casts a wider number or a string to INT as CAST does (2020.5
    is 2020, '5' is 5, 3000000000 fails with CAST_OVERFLOW)."""
    if x.type.kind in ("BIGINT", "DECIMAL", "DOUBLE", "FLOAT", "STRING"):
        x = Call(INT, "cast", (x,))
    return _int(x, node)


def _make_date(node: exp.Expression, bind: Bind) -> Scalar:
    """make_date(y, m, d): DATE; a date that does not exist fails (Spark ANSI:
    DATETIME_FIELD_OUT_OF_BOUNDS), only on the rows evaluated."""
    y, m, d = (_as_int(bind(a), node) for a in _arguments(node, 3))
    name = written_name(node)
    fields = (
        f"DATETIME_FIELD_OUT_OF_BOUNDS: {name} of a date that does not exist "
        "(a month outside 1-12, a day outside its month, or a year outside ±999999999)"
    )
    days = f"ARITHMETIC_OVERFLOW: {name} of a date more than 2^31 days from 1970-01-01"
    value: Scalar = Call(DATE, "make_date", (y, m, d))
    for problem, message in (("days", days), ("fields", fields)):  # Spark checks the fields first
        bad = Call(BOOLEAN, "make_date_invalid", (y, m, d, Lit(STRING, problem)))
        value = Call(DATE, "error_if", (bad, value, Lit(STRING, message)))
    return value


_SECONDS = SqlType("DECIMAL", precision=16, scale=6)  # make_timestamp's seconds, as Spark casts them


def _make_timestamp(node: exp.Expression, bind: Bind) -> Scalar:
    """make_timestamp(y, mo, d, h, mi, sec): the session's wall-clock time y-mo-d h:mi:sec
    (sec DECIMAL(16,6); 60 is the next minute's start). Spark ANSI fails on a field out of
    range (DATETIME_FIELD_OUT_OF_BOUNDS), 60 with a fraction (INVALID_FRACTION_OF_SECOND)
    and a time past a TIMESTAMP's range, only on the rows evaluated."""
    keys = ("year", "month", "day", "hour", "min", "sec")
    if node.args.get("nano") is not None or any(node.args.get(k) is None for k in keys):
        raise UnsupportedSql(
            f"{written_name(node)} is supported with six arguments (year, month, day, hour, minute, second) only",
            span_of(node),
        )
    return _timestamp_of_fields(node, [node.args[k] for k in keys], bind, TIMESTAMP)


def _make_timestamp_ntz(node: exp.Expression, bind: Bind) -> Scalar:
    """make_timestamp_ntz(y, mo, d, h, mi, sec): that wall clock, of no zone."""
    return _timestamp_of_fields(node, _arguments(node, 6), bind, TIMESTAMP_NTZ)


def _timestamp_of_fields(node: exp.Expression, exprs: list[exp.Expression], bind: Bind, result: SqlType) -> Scalar:
    fields = [_as_int(bind(e), node) for e in exprs[:5]]
    sec = bind(exprs[5])
    if not (sec.type.is_numeric or sec.type.kind in ("STRING", "NULL")):
        raise SqlError(f"{written_name(node)} needs a number of seconds, not {sec.type}", span_of(node))
    args = (*fields, sec if sec.type == _SECONDS else Call(_SECONDS, "cast", (sec,)))
    name = written_name(node)
    value: Scalar = Call(result, "make_timestamp", args)
    messages = (
        ("range", f"DATETIME_OVERFLOW: {name} of a time past a TIMESTAMP's range"),
        ("fields", f"DATETIME_FIELD_OUT_OF_BOUNDS: {name} of a date or time that does not exist"),
        ("fraction", f"INVALID_FRACTION_OF_SECOND: {name} of seconds above 60 (60 itself is the next minute)"),
    )
    for problem, message in messages:  # the last added is checked first
        bad = Call(BOOLEAN, "make_timestamp_invalid", (*args, Lit(STRING, problem)))
        value = Call(result, "error_if", (bad, value, Lit(STRING, message)))
    return value


def _constant_pattern(node: exp.Expression) -> str | None:
    """A call's constant datetime pattern as written (None: the NULL pattern); the
    pattern must be a string literal of the subset in compiler/logical/datetime_pattern.py."""
    written = _written_pattern(node)
    if written is None:
        return None
    meta = node._meta or {}
    try:
        parse_pattern(written)
    except PatternError as e:
        where = meta.get("format_at")
        span = Span(where[0], where[1] + 1 + e.offset) if isinstance(where, tuple) and "'" not in written else None
        raise UnsupportedSql(
            f"{written_name(node)}: {e.message} (in the pattern '{written}')", span or span_of(node)
        ) from None
    return written


def _date_format(node: exp.Expression, bind: Bind) -> Scalar:
    """date_format(x, 'pattern'): STRING, x's wall-clock time in the session's zone (a
    DATE is its midnight there, a string is cast to TIMESTAMP)."""
    inner = node.this
    if isinstance(inner, exp.TimeStrToTime) and not (inner._meta or {}).get("call_name"):
        inner = inner.this  # sqlglot's own wrapper
    x = coerce(_temporal(bind(inner), node, "TIMESTAMP"), TIMESTAMP)
    pattern = _constant_pattern(node)
    if pattern is None:
        return Lit(STRING, None)
    return Call(STRING, "date_format", (x, Lit(STRING, pattern)))


def _months_between(node: exp.Expression, bind: Bind) -> Scalar:
    """months_between(a, b[, roundOff]): DOUBLE, Spark's rule (DateTimeUtils.monthsBetween)."""
    a = coerce(_temporal(bind(node.this), node, "TIMESTAMP"), TIMESTAMP)
    b = coerce(_temporal(bind(node.expression), node, "TIMESTAMP"), TIMESTAMP)
    flag = node.args.get("roundoff")
    if isinstance(flag, exp.Null):
        return Lit(DOUBLE, None)
    if flag is not None and not isinstance(flag, exp.Boolean):
        raise UnsupportedSql(f"{written_name(node)} needs a constant TRUE or FALSE roundOff", span_of(flag))
    months = Call(DOUBLE, "months_between", (a, b))
    if flag is not None and not flag.this:
        return months
    # Spark rounds BigDecimal(diff) half up to 8 digits, which is round() of a DOUBLE
    return Call(DOUBLE, "round", (months, Lit(INT, 8)))


# Spark's day-of-week names (DateTimeUtils.getDayOfWeekFromString), as polars weekdays
_WEEKDAYS = {
    name: i + 1
    for i, names in enumerate(
        (("MO", "MON", "MONDAY"), ("TU", "TUE", "TUESDAY"), ("WE", "WED", "WEDNESDAY"),
         ("TH", "THU", "THURSDAY"), ("FR", "FRI", "FRIDAY"), ("SA", "SAT", "SATURDAY"),
         ("SU", "SUN", "SUNDAY"))
    )
    for name in names
}  # fmt: skip


def _next_day(node: exp.Expression, bind: Bind) -> Scalar:
    """next_day(d, 'MO'): the first later date on that day of the week; a name Spark does
    not know fails (ILLEGAL_DAY_OF_WEEK) on each row with a date."""
    d = coerce(_temporal(bind(node.this), node), DATE)
    name = node.expression
    if isinstance(name, exp.Null):
        return Lit(DATE, None)
    if not (isinstance(name, exp.Literal) and name.is_string):
        raise UnsupportedSql(f"{written_name(node)} needs a constant day of the week", span_of(name))
    day = _WEEKDAYS.get(name.name.upper())
    if day is None:
        message = f"ILLEGAL_DAY_OF_WEEK: Illegal input for day of week: {name.name}"
        return Call(DATE, "error_if", (Call(BOOLEAN, "is_not_null", (d,)), Lit(DATE, None), Lit(STRING, message)))
    return Call(DATE, "next_day", (d, Lit(INT, day)))


def _of_date(fn: str, result: SqlType) -> Rule:
    """weekday(d), dayname(d), monthname(d): of a DATE (a TIMESTAMP's or string's date)."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        arg = _arguments(node, 1)[0] if isinstance(node, exp.Anonymous) else node.this
        return Call(result, fn, (coerce(_temporal(bind(arg), node), DATE),))

    return rule


def _of_type(node: exp.Expression, x: Scalar, kind: str) -> Scalar:
    """An argument Spark takes of one type only (it casts no other to it)."""
    if x.type.kind == "NULL":
        return coerce(x, DATE if kind == "DATE" else TIMESTAMP)
    if x.type.kind != kind:
        raise SqlError(f"{written_name(node)} needs a {kind}, not {x.type}", span_of(node))
    return x


def _unix_date(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(INT, "unix_date", (_of_type(node, bind(node.this), "DATE"),))


def _date_from_unix_date(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(DATE, "date_from_unix_date", (_as_int(bind(node.this), node),))


def _unix_fraction(fn: str) -> Rule:
    """unix_millis(ts), unix_micros(ts): BIGINT, rounded down."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        return Call(BIGINT, fn, (_of_type(node, bind(node.this), "TIMESTAMP"),))

    return rule


# the milliseconds whose microseconds overflow a long (Spark: DATETIME_OVERFLOW)
_EPOCH_MILLIS = 9_223_372_036_854_775


def _timestamp_units(fn: str) -> Rule:
    """timestamp_millis(n), timestamp_micros(n): of an integer only."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        x = bind(_arguments(node, 1)[0])
        if not (x.type.is_integer or x.type.kind == "NULL"):
            raise SqlError(f"{written_name(node)} needs an integer, not {x.type}", span_of(node))
        x = coerce(x, BIGINT)
        if fn == "timestamp_micros":
            return Call(TIMESTAMP, fn, (x,))
        limit = Lit(BIGINT, _EPOCH_MILLIS)
        above, below = Call(BOOLEAN, "gt", (x, limit)), Call(BOOLEAN, "lt", (x, Lit(BIGINT, -_EPOCH_MILLIS)))
        over = Call(BOOLEAN, "or", (above, below))
        message = f"DATETIME_OVERFLOW: {written_name(node)} of milliseconds past ±{_EPOCH_MILLIS} from the epoch"
        return Call(TIMESTAMP, "error_if", (over, Call(TIMESTAMP, fn, (x,)), Lit(STRING, message)))

    return rule


def _refuse_clock(node: exp.Expression, bind: Bind) -> Scalar:
    raise UnsupportedSql(
        f"{written_name(node)} is not allowed in a view: its value changes with the clock, not with the tables; "
        "store the time in a column instead",
        span_of(node),
    )


RULES: dict[type[exp.Expression], Rule] = {
    exp.Year: _part("year"),
    exp.DayOfYear: _part("dayofyear"),
    exp.WeekOfYear: _part("weekofyear"),
    exp.UnixSeconds: _unix_seconds,
    exp.StrToUnix: _unix_timestamp,
    exp.UnixToStr: _from_unixtime,
    exp.Month: _part("month"),
    exp.Day: _part("day"),
    exp.DayOfMonth: _part("day"),
    exp.Quarter: _part("quarter"),
    exp.DayOfWeek: _part("dayofweek"),
    exp.Hour: _part("hour"),
    exp.Minute: _part("minute"),
    exp.Second: _part("second"),
    exp.Extract: _extract,
    exp.TsOrDsAdd: _date_add,
    exp.DateDiff: _datediff,
    exp.TimestampTrunc: _date_trunc,
    exp.DateTrunc: _trunc,
    exp.AddMonths: _add_months,
    exp.LastDay: _last_day,
    exp.TsOrDsToDate: _to_date,
    exp.TimeToStr: _date_format,
    exp.TimestampFromParts: _make_timestamp,
    exp.StrToTime: _to_timestamp,
    exp.MonthsBetween: _months_between,
    exp.NextDay: _next_day,
    exp.Dayname: _of_date("dayname", STRING),
    exp.Monthname: _of_date("monthname", STRING),
    exp.UnixDate: _unix_date,
    exp.DateFromUnixDate: _date_from_unix_date,
    exp.UnixMillis: _unix_fraction("unix_millis"),
    exp.UnixMicros: _unix_fraction("unix_micros"),
    exp.CurrentDate: _refuse_clock,
    exp.CurrentTimestamp: _refuse_clock,
}

# -- intervals ----------------------------------------------------------------------------

_INTERVAL_UNITS = {
    "YEAR": ("mo", 12), "MONTH": ("mo", 1), "WEEK": ("d", 7), "DAY": ("d", 1),
    "HOUR": ("h", 1), "MINUTE": ("m", 1), "SECOND": ("s", 1),
}  # fmt: skip


def interval_offset(node: exp.Interval, negate: bool) -> tuple[str, int] | None:
    """(polars offset unit, amount) of a constant INTERVAL literal such as `INTERVAL 3 DAY`."""
    unit = node.args.get("unit")
    name = (unit.name if unit is not None else "").upper().rstrip("S")
    found = _INTERVAL_UNITS.get(name)
    value = node.this
    if found is None or not isinstance(value, exp.Literal):
        return None
    try:
        amount = int(value.name)
    except ValueError:
        return None
    return found[0], (-amount if negate else amount) * found[1]


def interval_arithmetic(x: Scalar, node: exp.Interval, negate: bool) -> Scalar:
    """x ± INTERVAL: a DATE stays a DATE for days, months and years (Spark)."""
    offset = interval_offset(node, negate)
    if offset is None:
        raise UnsupportedSql(
            "only constant intervals of years, months, weeks, days, hours, minutes or seconds are supported",
            span_of(node),
        )
    unit, amount = offset
    if x.type.kind == "STRING":
        x = coerce(x, TIMESTAMP)
    if x.type.kind not in (*TEMPORAL_KINDS, "NULL"):
        raise SqlError(f"cannot add an INTERVAL to {x.type}", span_of(node))
    if x.type == DATE and unit in ("h", "m", "s"):
        x = coerce(x, TIMESTAMP)
    # a wall clock of no zone moves as a wall clock (the session's zone plays no part)
    t = DATE if x.type == DATE else TIMESTAMP_NTZ if x.type == TIMESTAMP_NTZ else TIMESTAMP
    try:
        x = coerce(x, t)
    except TypeMismatch as e:
        raise SqlError(str(e), span_of(node)) from None
    return Call(t, "offset_by", (x, Lit(STRING, f"{amount}{unit}")))

# functions sqlglot parses as anonymous calls, by name
ANONYMOUS_RULES: dict[str, Rule] = {
    "timestamp_seconds": _timestamp_seconds,
    "timestamp_millis": _timestamp_units("timestamp_millis"),
    "timestamp_micros": _timestamp_units("timestamp_micros"),
    "make_date": _make_date,
    "weekday": _of_date("weekday", INT),
    "date_part": _date_part,
    "datepart": _date_part,
    "try_to_date": _try_parse(DATE),
    "try_to_timestamp": _try_parse(TIMESTAMP),
    "to_timestamp_ntz": _to_timestamp_ntz,
    "make_timestamp_ntz": _make_timestamp_ntz,
}

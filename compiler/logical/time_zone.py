"""Spark's session time zone (`spark.sql.session.timeZone`) made explicit in the plan.

A TIMESTAMP is an instant, held as its UTC wall-clock time. Spark reads and writes the
wall clock of the session's zone wherever an instant meets a calendar: CAST to DATE or
STRING and back, TIMESTAMP literals, HOUR/MINUTE/SECOND, date_trunc to an hour or longer,
and adding months or whole days. Under a zone other than UTC, this pass rewrites each of
those places to convert explicitly, so the runtime stays zone-free and the circuit's dump
and digest say which zone it computes in:

    CAST(ts AS DATE)             ->  CAST(from_utc(ts, zone) AS DATE)
    CAST(d AS TIMESTAMP)         ->  to_utc(CAST(d AS TIMESTAMP), zone), and of a TIMESTAMP_NTZ
    CAST(ts AS TIMESTAMP_NTZ)    ->  CAST(from_utc(ts, zone) AS TIMESTAMP_NTZ)
    hour(ts)                     ->  hour(from_utc(ts, zone)), and date_format(ts, ...)
    months_between(a, b)         ->  zoned_months_between(a, b, zone)
    make_timestamp(...)          ->  to_utc(make_timestamp(...), zone), and to_timestamp(s, fmt)
    date_trunc(ts, '1d')         ->  zoned_trunc(ts, '1d', zone)
    ts + INTERVAL 1 DAY          ->  zoned_offset_by(ts, '1d', zone)
    TIMESTAMP '2024-03-10 02:30' ->  the instant, converted now

A local time that does not exist (the hour a clock skips) is moved forward by the gap; one
that occurs twice takes the earlier offset, or, when it is derived from an instant (date_trunc
to a day or less, adding an interval), that instant's offset if it can: java.time's rules,
which Spark follows.
Comparisons, arithmetic in hours, minutes and seconds, epoch seconds (CAST to a number),
grouping and ordering do not depend on the zone and are left alone. A TIMESTAMP_NTZ is a
wall clock already: nothing of it is converted except where it meets an instant.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import zoneinfo
from collections.abc import Sequence

from dbspc.compiler.errors import UsageError
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import STRING, TIMESTAMP, TIMESTAMP_NTZ

# zone ids that are UTC itself (java.time's ZoneId.of normalizes these to Z or UTC)
_UTC = frozenset(
    "utc etc/utc gmt etc/gmt z +00:00 -00:00 uct etc/uct universal etc/universal zulu etc/zulu gmt0 etc/gmt0 "
    "etc/gmt+0 etc/gmt-0 greenwich etc/greenwich utc+00:00 gmt+00:00".split()
)
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
# functions of a TIMESTAMP's wall-clock fields (their first argument)
_TIME_PARTS = frozenset("year month day quarter dayofweek dayofyear weekofyear hour minute second date_format".split())
_CALENDAR_TRUNC = frozenset(("1m", "1h", "1d", "1w", "1mo", "1q", "1y"))  # date_trunc units from MINUTE up
# microseconds of a day-time interval's unit (offset_by's polars units)
UNIT_MICROS = {"d": 86_400_000_000, "h": 3_600_000_000, "m": 60_000_000, "s": 1_000_000}
_OFFSET_TEXT = re.compile(r"(-?\d+)(mo|d|h|m|s)")


def split_offset(offset: str) -> tuple[int, str] | None:
    """(amount, unit) of an offset_by interval such as '-36h' or '1mo'."""
    m = _OFFSET_TEXT.fullmatch(offset)
    return (int(m.group(1)), m.group(2)) if m else None


def zone_id(zone: str) -> str | None:
    """The IANA zone to compute in for a Spark session time zone, None for UTC. A fixed
    offset such as `+02:00` becomes `Etc/GMT-2`; one with minutes, or an unknown name, is
    refused."""
    name = zone.strip()
    if name.lower() in _UTC:
        return None
    if m := _OFFSET.match(name):
        sign, hours, minutes = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        if minutes == 0 and hours <= 14:
            if hours == 0:
                return None
            return f"Etc/GMT{'-' if sign == '+' else '+'}{hours}"  # POSIX: the sign is reversed
        raise UsageError(f"session time zone {zone!r}: only whole-hour offsets or region names are supported")
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown session time zone {zone!r} (spark.sql.session.timeZone)") from None
    return name


def localize(plans: Sequence[lp.Relation], zone: str) -> list[lp.Relation]:
    """`plans` computing in Spark session time zone `zone` (an IANA name from zone_id);
    a node shared between plans stays one node."""
    done: dict[int, lp.Relation] = {}
    return [_relation(p, zone, done) for p in plans]


def _relation(rel: lp.Relation, zone: str, done: dict[int, lp.Relation]) -> lp.Relation:
    hit = done.get(id(rel))
    if hit is not None:
        return hit
    changes: dict[str, object] = {}
    for f in dataclasses.fields(rel):
        value = getattr(rel, f.name)
        if isinstance(value, lp.Relation):
            changes[f.name] = _relation(value, zone, done)
        elif isinstance(value, Scalar):
            changes[f.name] = _scalar(value, zone)
        elif isinstance(value, tuple) and value and all(isinstance(v, lp.Relation) for v in value):
            changes[f.name] = tuple(_relation(v, zone, done) for v in value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Scalar) for v in value):
            changes[f.name] = tuple(_scalar(v, zone) for v in value)
    if isinstance(rel, lp.Values):
        kinds = [f.type.kind for f in rel.fields]
        changes["rows"] = tuple(
            tuple(_instant(v, zone) if k == "TIMESTAMP" else v for v, k in zip(row, kinds, strict=True))
            for row in rel.rows
        )
    out = dataclasses.replace(rel, **changes) if changes else rel  # type: ignore[arg-type]
    done[id(rel)] = out
    return out


def _scalar(x: Scalar, zone: str) -> Scalar:
    if isinstance(x, Lit):
        return Lit(x.type, _instant(x.value, zone)) if x.type == TIMESTAMP else x
    if not isinstance(x, Call):
        return x
    if x.fn in _COMPARISONS and (unwrapped := _unwrapped_comparison(x, zone)) is not None:
        return unwrapped
    args = tuple(_scalar(a, zone) for a in x.args)
    z = Lit(STRING, zone)
    fn = x.fn
    if fn in ("cast", "try_cast"):
        src, dst = args[0].type.kind, x.type.kind
        if src == "TIMESTAMP" and dst in ("DATE", "STRING"):
            return Call(x.type, fn, (Call(TIMESTAMP, "from_utc", (args[0], z)),))
        if dst == "TIMESTAMP" and src in ("DATE", "STRING", "TIMESTAMP_NTZ"):
            return Call(TIMESTAMP, "to_utc", (Call(x.type, fn, args), z))
        if src == "TIMESTAMP" and dst == "TIMESTAMP_NTZ":
            return Call(x.type, fn, (Call(TIMESTAMP, "from_utc", (args[0], z)),))
    elif fn in _TIME_PARTS and args[0].type == TIMESTAMP:
        return Call(x.type, fn, (Call(TIMESTAMP, "from_utc", (args[0], z)), *args[1:]))
    elif fn == "date_trunc" and args[0].type == TIMESTAMP and _constant(args[1]) in _CALENDAR_TRUNC:
        return Call(TIMESTAMP, "zoned_trunc", (args[0], args[1], z))
    elif fn == "offset_by" and x.type == TIMESTAMP and _calendar_offset(_constant(args[1])):
        return Call(TIMESTAMP, "zoned_offset_by", (args[0], args[1], z))
    elif fn in ("make_timestamp", "parse_datetime") and x.type == TIMESTAMP:  # wall-clock times
        return Call(TIMESTAMP, "to_utc", (Call(x.type, fn, args), z))
    elif fn == "months_between":
        return Call(x.type, "zoned_months_between", (*args, z))
    return Call(x.type, fn, args) if args != x.args else x


_COMPARISONS = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq"))


def _unwrapped_comparison(x: Call, zone: str) -> Call | None:
    """Spark's optimizer (UnwrapCastInBinaryComparison) compares a wall clock cast to an
    instant with an instant literal as wall clocks, `n op CAST(lit AS TIMESTAMP_NTZ)`, and
    an instant cast to a wall clock with a wall-clock literal as instants, whenever the
    literal converts there and back unchanged. That differs from the cast where a wall
    clock falls in a skipped hour, or an instant in a repeated one (checked against Spark
    4.3: a TIMESTAMP_NTZ of 02:30 on 2024-03-10 is not = TIMESTAMP '2024-03-10 03:30:00'
    in Los Angeles, though CAST of it to TIMESTAMP is that instant)."""
    if len(x.args) != 2:
        return None
    for side in (0, 1):
        cast, lit = x.args[side], x.args[1 - side]
        if not (isinstance(cast, Call) and cast.fn in ("cast", "try_cast") and isinstance(lit, Lit)):
            continue
        if lit.value is None or lit.type != cast.type:
            continue
        inner = cast.args[0]
        if (inner.type, cast.type) == (TIMESTAMP_NTZ, TIMESTAMP):
            instant = _instant(lit.value, zone)
            assert isinstance(instant, dt.datetime)
            wall = _wall_clock(instant, zone)
            if _instant(wall, zone) != instant:
                return None
            moved: Scalar = Lit(TIMESTAMP_NTZ, wall)
        elif (inner.type, cast.type) == (TIMESTAMP, TIMESTAMP_NTZ):
            wall = _naive(lit.value)
            instant = _instant(wall, zone)
            assert isinstance(instant, dt.datetime)
            if _wall_clock(instant, zone) != wall:
                return None
            moved = Lit(TIMESTAMP, instant)  # already UTC: not converted again
        else:
            continue
        args = [_scalar(inner, zone), moved] if side == 0 else [moved, _scalar(inner, zone)]
        return Call(x.type, x.fn, tuple(args))
    return None


def _wall_clock(instant: dt.datetime, zone: str) -> dt.datetime:
    """The wall-clock time in `zone` of a naive UTC instant."""
    return instant.replace(tzinfo=dt.UTC).astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None)


def _naive(value: object) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    assert isinstance(value, dt.datetime)
    return value.replace(tzinfo=None)


def _constant(x: Scalar) -> str:
    return x.value if isinstance(x, Lit) and isinstance(x.value, str) else ""


def _calendar_offset(offset: str) -> bool:
    """Whether `ts + offset` moves the wall clock: months, or at least a whole day (Spark
    splits a day-time interval into days, added to the local date, and the rest)."""
    split = split_offset(offset)
    if split is None:
        return False
    amount, unit = split
    return unit == "mo" or abs(amount) * UNIT_MICROS[unit] >= UNIT_MICROS["d"]


def _instant(value: object, zone: str) -> object:
    """A TIMESTAMP constant written in the session's zone, as the UTC instant it names
    (fold 0: the earlier of two, and the offset before a gap, as java.time)."""
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    if not isinstance(value, dt.datetime):
        return value
    aware = value if value.tzinfo is not None else value.replace(tzinfo=zoneinfo.ZoneInfo(zone))
    return aware.astimezone(dt.UTC).replace(tzinfo=None)

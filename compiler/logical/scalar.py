"""Typed scalar expressions of the logical plan.

A scalar is evaluated once per row of its input relation; `Col(i)` names the input's
i-th column. The binder picks the function name so that the dialect's semantics are
explicit in the IR (Spark's `/` and SQLite's `/` are different functions), and the
runtime compiles each function once into a whole-column kernel.

Function catalogue (`Call.fn`), with SQL three-valued logic throughout: unless said
otherwise a NULL argument gives NULL.

Arithmetic (operands are already cast to the result type by the binder, except the
noted ones):
  add, sub, mul            integer kinds raise on overflow of the result type (Spark ANSI)
  neg
  div                      true division; DOUBLE or DECIMAL result; divisor 0 raises
  div_or_null              true division; divisor 0 gives NULL (try_divide, SQLite reals)
  ieee_div                 DOUBLE division as IEEE 754: x / 0 is +-Infinity, 0 / 0 NaN (DuckDB)
  int_div                  truncating integer division (Spark `div`); divisor 0 raises
  int_div_or_null          truncating integer division; divisor 0 gives NULL (SQLite)
  mod                      remainder with the dividend's sign; divisor 0 raises
  mod_or_null              remainder; divisor 0 gives NULL
  abs
  bit_and, bit_or, bit_xor, bit_not   two's complement, of integer kinds only (never overflow)
  bit_count                the bits set in a BIGINT (a narrower value sign-extended first), INT
  shift_left, shift_right, shift_right_unsigned   Java's <<, >>, >>> of an INT or BIGINT by an
                           INT (mod 32 or 64), in the value's type (never overflow)
Comparison (operands cast to a common type by the binder):
  eq, ne, lt, le, gt, ge
  null_safe_eq             never NULL: NULL <=> NULL is true
Logic (Kleene):
  and, or (variadic), not
  is_null, is_not_null     never NULL
  is_true, is_false        never NULL (IS TRUE / IS FALSE)
Conditionals:
  case                     args = (cond1, val1, cond2, val2, ..., else); a NULL condition
                           counts as false
  coalesce (variadic)
  nullif                   nullif(a, b) = CASE WHEN a = b THEN NULL ELSE a END
  error_if                 args = (cond, value, message literal[, shown]): value, but
                           raises `message` on a row where cond is true (a scalar
                           subquery that returned several rows), its {value} the
                           row's `shown`
Conversion:
  cast                     to Call.type; invalid string input raises (Spark ANSI)
  try_cast                 to Call.type; invalid input gives NULL
Strings:
  like                     args = (value, pattern); SQL LIKE with % and _ and \\ escape
  concat (variadic)        NULL if any argument is NULL
  upper, lower, length (characters), trim, ltrim, rtrim
  substring                args = (s, pos[, len]); 1-based, SQL semantics for pos <= 0
  replace                  args = (s, search, replacement)
  left, right              args = (s, n)
Numbers:
  round                    args = (x[, digits]); half away from zero
  floor, ceil
  greatest, least (variadic; NULLs skipped, as Spark)
Dates and times (compiler/frontend/bind_datetime.py):
  year, month, day, quarter, dayofweek, dayofyear, weekofyear, hour, minute, second
  unix_seconds (ts): whole seconds since the epoch, rounded down; timestamp_seconds (n): back;
  unix_timestamp (ts): rounded toward zero
  date_add_days (d, n), datediff (end, start), add_months (d, n), last_day,
  add_months_overflow (d, n): whether its day number passes an INT
  date_trunc (x, 'polars unit'), offset_by (x, 'constant interval')
  from_utc (ts, zone), to_utc (ts, zone), zoned_offset_by (ts, 'interval', zone),
  zoned_trunc (ts, 'unit', zone): the session
  time zone's wall clock (compiler/logical/time_zone.py)
  make_date (y, m, d), make_date_invalid (y, m, d, 'fields' or 'days'): whether it fails
  date_format (ts, 'Spark pattern'): compiler/logical/datetime_pattern.py's subset
  months_between (a, b): unrounded, zoned_months_between (a, b, zone)
  next_day (d, polars weekday literal), weekday (0 = Monday), dayname, monthname
  unix_date, date_from_unix_date, unix_millis, unix_micros (rounded down),
  timestamp_millis, timestamp_micros
  make_timestamp (y, mo, d, h, mi, sec): a wall-clock time; make_timestamp_invalid (..., problem)
  parse_datetime (s, 'pattern'): to_timestamp's wall-clock time (to_date casts it);
  parse_datetime_invalid (s, 'pattern'): whether it fails (datetime_pattern.parse_pieces)
More strings (compiler/frontend/bind_strings.py):
  lpad, rpad (s, width, padding), locate (sub, s, start), concat_ws (sep, ...)
  regexp_extract (s, pattern, group), rlike (s, pattern), initcap, reverse, repeat
  (patterns are rewritten from Java's syntax for the runtime's engine: java_regex.py)
  regexp_replace (s, pattern, replacement, position), substring_index (s, delim, count),
  split_part (s, delim, part), elt (see bind_strings: a case under error_if),
  translate (s, replaced, replacements, deleted), startswith, endswith, contains (s, t),
  ascii, chr, btrim, ltrim_chars, rtrim_chars (s, chars), octet_length, bit_length,
  split (s, pattern, limit): ARRAY<STRING>
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbspc.compiler.types import BOOLEAN, SqlType

FUNCTIONS = frozenset(
    """add sub mul neg div div_or_null ieee_div int_div int_div_or_null mod mod_or_null abs
    bit_and bit_or bit_xor bit_not bit_count shift_left shift_right shift_right_unsigned
    eq ne lt le gt ge null_safe_eq and or not is_null is_not_null is_true is_false
    case coalesce nullif error_if store_char cast try_cast like concat upper lower length trim ltrim rtrim
    substring replace left right round bround floor ceil greatest least
    year month day quarter dayofweek dayofyear weekofyear hour minute second unix_seconds timestamp_seconds
    date_add_days datediff date_trunc
    add_months last_day offset_by from_utc to_utc zoned_offset_by zoned_trunc
    lpad rpad locate concat_ws regexp_extract rlike initcap reverse repeat sqlite_real
    array_size array_contains sort_array
    sqrt cbrt exp expm1 ln log10 log2 log1p log power sin cos tan asin acos atan atan2 hypot sinh cosh tanh
    asinh acosh atanh cot sec csc degrees radians sign rint isnan nanvl factorial pmod
    try_add try_sub try_mul try_div try_mod
    regexp_replace substring_index split_part translate startswith endswith contains
    ascii chr btrim ltrim_chars rtrim_chars octet_length bit_length split
    make_date make_date_invalid add_months_overflow date_format months_between zoned_months_between next_day
    weekday dayname monthname
    unix_date date_from_unix_date unix_millis unix_micros timestamp_millis timestamp_micros
    make_timestamp make_timestamp_invalid parse_datetime parse_datetime_invalid
    unix_timestamp""".split()
)


@dataclass(frozen=True, slots=True)
class Scalar:
    """Base class: every scalar knows its SQL result type."""

    type: SqlType


@dataclass(frozen=True, slots=True)
class Col(Scalar):
    """The value of the input relation's column `index`."""

    index: int

    def __str__(self) -> str:
        return f"#{self.index}"


@dataclass(frozen=True, slots=True)
class Lit(Scalar):
    """A constant: int, float, Decimal, str, bool, date, datetime, or None for NULL."""

    value: Any

    def __str__(self) -> str:
        if self.value is None:
            return f"NULL::{self.type}"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        if isinstance(self.value, bool):
            return "TRUE" if self.value else "FALSE"
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Call(Scalar):
    """Function `fn` from the catalogue above applied to `args`."""

    fn: str
    args: tuple[Scalar, ...]
    # Hashed once: hashing a call hashes its whole tree, and the runtime's caches and the
    # circuit's hash-consing hash the same expressions many times.
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.fn not in FUNCTIONS:
            raise ValueError(f"unknown scalar function {self.fn!r}")
        try:
            object.__setattr__(self, "_hash", hash((self.type, self.fn, self.args)))
        except TypeError:  # an unhashable literal below: unhashable, as before
            pass

    def __hash__(self) -> int:
        return self._hash if self._hash is not None else hash((self.type, self.fn, self.args))

    def __reduce__(self) -> tuple[type[Call], tuple[object, ...]]:
        # rebuilt by the constructor: a string's hash differs between processes
        return (Call, (self.type, self.fn, self.args))

    def __str__(self) -> str:
        args = [str(a) for a in self.args]  # once: rendering each argument twice is exponential in depth
        inner = ", ".join(args)
        symbol = _INFIX.get(self.fn)
        if symbol is not None:
            return "(" + f" {symbol} ".join(args) + ")"
        if self.fn in ("cast", "try_cast"):
            return f"{self.fn}({inner} AS {self.type})"
        return f"{self.fn}({inner})"


_INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "eq": "=",
    "ne": "<>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "AND",
    "or": "OR",
    "null_safe_eq": "<=>",
}


def columns_used(expr: Scalar) -> frozenset[int]:
    """The input columns an expression reads."""
    if isinstance(expr, Col):
        return frozenset((expr.index,))
    if isinstance(expr, Call):
        out: frozenset[int] = frozenset()
        for arg in expr.args:
            out |= columns_used(arg)
        return out
    return frozenset()


def reads_no_column(expr: Scalar) -> bool:
    """Whether `expr` is constant. A column among a call's operands is looked for before
    the operands' own, so a deep chain over columns is not walked at each of its levels."""
    if not isinstance(expr, Call):
        return not isinstance(expr, Col)
    return not any(isinstance(a, Col) for a in expr.args) and all(map(reads_no_column, expr.args))


def remap_columns(expr: Scalar, mapping: dict[int, int]) -> Scalar:
    """Renumber column references, e.g. to move a predicate across a projection."""
    if isinstance(expr, Col):
        return Col(expr.type, mapping[expr.index])
    if isinstance(expr, Call):
        return Call(expr.type, expr.fn, tuple(remap_columns(a, mapping) for a in expr.args))
    return expr


def conjunction(parts: list[Scalar]) -> Scalar:
    """AND of the parts; TRUE for none."""
    if not parts:
        return Lit(BOOLEAN, True)
    if len(parts) == 1:
        return parts[0]
    return Call(BOOLEAN, "and", tuple(parts))

"""Vectorized kernels of the string functions of compiler/frontend/bind_strings.py.

Each takes the evaluated arguments and the typed call (constants are read from it) and
returns the value expression with SQL's NULL propagation.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from dbspc.compiler.frontend.java_regex import FINAL_TERMINATOR
from dbspc.compiler.logical.scalar import Call, Lit

Kernel = Callable[[list[pl.Expr], Call], pl.Expr]


def _constant(call: Call, i: int) -> object:
    arg = call.args[i]
    assert isinstance(arg, Lit)
    return arg.value


def _null_if_any(value: pl.Expr, args: list[pl.Expr]) -> pl.Expr:
    return pl.when(pl.any_horizontal([a.is_null() for a in args])).then(None).otherwise(value)


# The longest string Spark makes, in bytes (ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH): a
# longer result fails there. dbspc raises before it allocates one (TOO_LARGE below).
MAX_STRING_BYTES = 2**31 - 1 - 15


def _pad(left: bool) -> Kernel:
    """lpad/rpad(s, width, pad): s cut to `width` characters, or filled to them with `pad`
    repeated."""

    def kernel(args: list[pl.Expr], call: Call) -> pl.Expr:
        s = args[0]
        width = int(_constant(call, 1))  # type: ignore[call-overload]
        pad = str(_constant(call, 2))
        if width <= 0:
            return _null_if_any(pl.lit(""), [s])
        n = s.str.len_chars().cast(pl.Int64)
        need = pl.lit(width, pl.Int64) - n
        if width > MAX_STRING_BYTES or not pad:
            padded = pl.lit(None, pl.String) if pad else s  # (a padded row raises: _pad_too_large)
        elif len(pad) == 1:
            padded = s.str.pad_start(width, pad) if left else s.str.pad_end(width, pad)
        else:
            # the widest fill, built once for the batch and cut per row
            filler = (pad * (width // len(pad) + 1))[:width]
            fill = pl.lit(filler).str.slice(0, pl.when(need > 0).then(need).otherwise(0))
            padded = pl.concat_str([fill, s]) if left else pl.concat_str([s, fill])
        value = pl.when(need <= 0).then(s.str.slice(0, width)).otherwise(padded)
        return _null_if_any(value, [s])

    return kernel


def _pad_too_large(args: list[pl.Expr], call: Call, out: pl.Expr | None = None) -> pl.Expr | None:
    width, pad = _constant(call, 1), _constant(call, 2)
    assert isinstance(width, int)
    if width <= MAX_STRING_BYTES or not pad:
        return None
    return args[0].str.len_chars().cast(pl.Int64) < width


def _locate(args: list[pl.Expr], call: Call) -> pl.Expr:
    """1-based position of sub in s at or after `start`; 0 if absent or start < 1; 1 for an
    empty sub; 0 for a NULL start, whatever sub and s are (Spark's StringLocate, after
    Hive, reads the start first)."""
    sub, s, start = args
    start64 = start.cast(pl.Int64)
    tail = s.str.slice(pl.when(start64 > 0).then(start64 - 1).otherwise(0))
    # the characters before the first occurrence: the first piece of a split on sub
    before = tail.str.split(sub).list.first().str.len_chars().cast(pl.Int64)
    found = tail.str.contains(sub, literal=True)
    empty = sub.str.len_chars() == 0
    position = (
        pl.when(start64 < 1)
        .then(0)
        .when(empty)
        .then(1)  # (Spark's indexOf of an empty string is 0, wherever it starts)
        .when(found)
        .then(before + start64)
        .otherwise(0)
    )
    return pl.when(start.is_null()).then(0).otherwise(_null_if_any(position.cast(pl.Int32), [sub, s]))


def _concat_ws(args: list[pl.Expr], call: Call) -> pl.Expr:
    sep = str(_constant(call, 0))
    return pl.concat_str(args[1:], separator=sep, ignore_nulls=True)


def _regexp_extract(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The group's text; '' when the pattern does not match (Spark)."""
    s = args[0]
    pattern = str(_constant(call, 1))
    group = int(_constant(call, 2))  # type: ignore[call-overload]
    return pl.when(s.is_null()).then(None).otherwise(s.str.extract(pattern, group).fill_null(""))


def _rlike(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Whether the pattern (rewritten from Java's syntax at compile time) matches part of s;
    one that ended with Java's `$` may also match s without its final line terminator."""
    s, pattern = args[0], str(_constant(call, 1))
    found = s.str.contains(pattern)
    if _constant(call, 2):
        found = found | s.str.replace(FINAL_TERMINATOR, "").str.contains(pattern)
    return found


def _initcap(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Each space-separated word: first character in title case, the rest lower case. Title
    case is not upper case for some characters, and Spark takes it: 'ß' is 'Ss' (not 'SS'),
    the digraph 'ǆ' is 'ǅ' (not 'Ǆ'), the ligature 'ﬁ' is 'Fi'."""
    word = pl.element()
    cap = word.str.slice(0, 1).str.to_titlecase() + word.str.slice(1).str.to_lowercase()
    return args[0].str.split(" ").list.eval(cap).list.join(" ")


def _repeat(args: list[pl.Expr], call: Call) -> pl.Expr:
    s, n = args
    too_large = _repeat_too_large(args, call)
    times = pl.when((n > 0) & ~too_large.fill_null(False)).then(n).otherwise(0).cast(pl.UInt32)
    return _null_if_any(s.repeat_by(times).list.join(""), [s, n])


def _repeat_too_large(args: list[pl.Expr], call: Call, out: pl.Expr | None = None) -> pl.Expr:
    s, n = args
    return s.str.len_bytes().cast(pl.Int64) * n.cast(pl.Int64) > MAX_STRING_BYTES


def _regexp_replace(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Every match replaced (pattern and replacement rewritten for Rust's engine at compile
    time), searching from the position-th character: the text before it is kept, and `^`
    matches there (Java's matcher region). A position past the end leaves s as it is."""
    s = args[0]
    pattern, replacement = str(_constant(call, 1)), str(_constant(call, 2))
    start = int(_constant(call, 3)) - 1  # type: ignore[call-overload]
    if start == 0:
        return s.str.replace_all(pattern, replacement)
    tail = s.str.slice(start).str.replace_all(pattern, replacement)
    return pl.when(s.str.len_chars() > start).then(pl.concat_str([s.str.slice(0, start), tail])).otherwise(s)


def _substring_index(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The text before the count-th delimiter, or after the count-th from the end when
    count < 0; s itself with fewer delimiters, '' for count 0 or an empty delimiter."""
    s, _, count = args
    delim = str(_constant(call, 1))
    n = count.cast(pl.Int64)
    if not delim:
        return _null_if_any(pl.lit(""), [s, n])
    parts = s.str.split(delim, inclusive=False)
    pieces = parts.list.len().cast(pl.Int64)  # delimiters + 1
    offset = pl.when(n > 0).then(0).otherwise(pieces + n)
    kept = parts.list.slice(offset, n.abs()).list.join(delim)
    value = pl.when(n == 0).then(pl.lit("")).when(n.abs() >= pieces).then(s).otherwise(kept)
    return _null_if_any(value, [s, n])


def _split_part(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The part-th piece of s split at the constant delimiter (Java's split with the
    delimiter quoted: leftmost, not overlapping, empty pieces kept), counted from the end
    when part < 0; '' beyond the pieces. An empty delimiter leaves s whole, its only
    piece. Part 0 is the binder's error."""
    s, _, part = args
    delim = str(_constant(call, 1))
    n = part.cast(pl.Int64)
    if not delim:
        value = pl.when(n.abs() == 1).then(s).otherwise(pl.lit(""))
    else:
        index = pl.when(n > 0).then(n - 1).otherwise(n)
        value = s.str.split(delim).list.get(index, null_on_oob=True).fill_null("")
    return _null_if_any(value, [s, n])


def _translate(args: list[pl.Expr], call: Call) -> pl.Expr:
    """Each character of `replaced` becomes the character of `replacements` at its index;
    each of `deleted` is removed (all at once: a replacement is not replaced again)."""
    s = args[0]
    replaced, replacements, deleted = (str(_constant(call, i)) for i in (1, 2, 3))
    keys = list(replaced) + list(deleted)
    if not keys:
        return s
    return s.str.replace_many(keys, list(replacements) + [""] * len(deleted))


def _ascii(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The code point of the first character, decoded from its UTF-8 bytes; 0 for ''."""
    hex_bytes = args[0].str.slice(0, 1).str.encode("hex")
    size = hex_bytes.str.len_bytes() // 2

    def byte(i: int) -> pl.Expr:
        return hex_bytes.str.slice(2 * i, 2).str.to_integer(base=16, strict=False).cast(pl.Int64)

    def tail(count: int) -> pl.Expr:
        value = pl.lit(0, pl.Int64)
        for i in range(1, count + 1):
            value = value * 64 + byte(i) % 64
        return value

    lead = byte(0)
    code = (
        pl.when(size == 0)
        .then(0)
        .when(size == 1)
        .then(lead)
        .when(size == 2)
        .then((lead % 32) * 64 + tail(1))
        .when(size == 3)
        .then((lead % 16) * 4096 + tail(2))
        .otherwise((lead % 8) * 262144 + tail(3))
    )
    return _null_if_any(code.cast(pl.Int32), args)


_LATIN1 = [chr(i) for i in range(256)]


def _chr(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The character U+00xx for n mod 256 ('\\0' for a multiple of 256); '' for n < 0."""
    n = args[0].cast(pl.Int64)
    char = (n % 256).replace_strict(list(range(256)), _LATIN1, return_dtype=pl.String)
    return pl.when(n.is_null()).then(None).when(n < 0).then(pl.lit("")).otherwise(char)


def _trim_chars(start: bool, end: bool) -> Kernel:
    """s without the characters of `chars` (a set) at its start, end or both; s itself for ''."""

    def kernel(args: list[pl.Expr], call: Call) -> pl.Expr:
        s, chars = args
        if start and end:
            value = s.str.strip_chars(chars)
        else:
            value = s.str.strip_chars_start(chars) if start else s.str.strip_chars_end(chars)
        return _null_if_any(value, args)

    return kernel


def _split(args: list[pl.Expr], call: Call) -> pl.Expr:
    """The pieces between the pattern's matches, at most `limit` when limit > 0 (the last
    holding the rest). Each match ends a segment found by a lazy `.*?` before it; the
    piece is the segment without that match, and what follows the last segment is the
    final piece. The empty pattern splits into characters ([''] for '')."""
    s = args[0]
    pattern = str(_constant(call, 1))
    limit = int(_constant(call, 2))  # type: ignore[call-overload]
    if not pattern:
        chars = s.str.split("")
        if limit > 0:
            limited = pl.concat_list([chars.list.head(limit - 1), s.str.slice(limit - 1)])
            chars = pl.when(s.str.len_chars() > limit).then(limited).otherwise(chars)
        value = pl.when(s == "").then(pl.concat_list([pl.lit("")])).otherwise(chars)
        return pl.when(s.is_null()).then(None).otherwise(value)
    segments = s.str.extract_all(f"(?s:.)*?(?:{pattern})")
    if limit > 0:
        segments = segments.list.head(limit - 1)
    pieces = segments.list.eval(pl.element().str.replace(f"(?:{pattern})\\z", ""))
    used = segments.list.eval(pl.element().str.len_chars()).list.sum()
    value = pl.concat_list([pieces, s.str.slice(used)])
    return pl.when(s.is_null()).then(None).otherwise(value)


# SQLite reads a number from the longest numeric prefix of a text, after leading spaces.
_SQLITE_NUMBER = r"^[ \t\n\f\r]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"


def _sqlite_real(args: list[pl.Expr], call: Call) -> pl.Expr:
    """A text as SQLite's sum() and avg() read it: its numeric prefix, 0.0 without one."""
    s = args[0]
    number = s.str.extract(_SQLITE_NUMBER, 1).cast(pl.Float64, strict=False).fill_null(0.0)
    return pl.when(s.is_null()).then(None).otherwise(number)


# The rows on which a function's result would pass MAX_STRING_BYTES (None: none can).
# (`out`, the value, is not needed: the size follows from the arguments)
TOO_LARGE: dict[str, Callable[[list[pl.Expr], Call, pl.Expr], pl.Expr | None]] = {
    "lpad": _pad_too_large,
    "rpad": _pad_too_large,
    "repeat": _repeat_too_large,
}

KERNELS: dict[str, Kernel] = {
    "sqlite_real": _sqlite_real,
    "lpad": _pad(left=True),
    "rpad": _pad(left=False),
    "locate": _locate,
    "concat_ws": _concat_ws,
    "regexp_extract": _regexp_extract,
    "rlike": _rlike,
    "initcap": _initcap,
    "reverse": lambda a, c: a[0].str.reverse(),
    "repeat": _repeat,
    "regexp_replace": _regexp_replace,
    "substring_index": _substring_index,
    "split_part": _split_part,
    "translate": _translate,
    "startswith": lambda a, c: a[0].str.starts_with(a[1]),
    "endswith": lambda a, c: a[0].str.ends_with(a[1]),
    "contains": lambda a, c: a[0].str.contains(a[1], literal=True),
    "ascii": _ascii,
    "chr": _chr,
    "btrim": _trim_chars(start=True, end=True),
    "ltrim_chars": _trim_chars(start=True, end=False),
    "rtrim_chars": _trim_chars(start=False, end=True),
    "octet_length": lambda a, c: a[0].str.len_bytes().cast(pl.Int32),
    "bit_length": lambda a, c: (a[0].str.len_bytes().cast(pl.Int32) * 8),
    "split": _split,
}

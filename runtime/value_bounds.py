"""Which of a batch's ANSI checks cannot fire: interval arithmetic over the integer
subexpressions, from the least and greatest value of each column they read.

A checked integer operator (`+`, `-`, `*`, negation, ABS, a narrowing CAST) computes in
128 bits, casts back and tests the cast; a division tests its divisor for zero. Each
test repeats its operand's expression tree, and polars plans every tree anew on each
call: on the three-row tables of a sqllogictest query, `-c2 + c1*3 - c0*2 + 7` takes
~740 us checked against ~50 us unchecked. Where the intervals prove that an operator's
result fits its type (or that a divisor is never zero) on every row of this batch, the
batch is evaluated without that check, in 64-bit arithmetic, with the same results.

The proof holds on every row, whatever guards (CASE, AND, COALESCE) choose which rows
evaluate a subexpression: a subexpression's interval covers all rows. One that may
overflow keeps its check, and gives its parent its interval clipped to its type's range
(a row outside it raises). A call the analysis does not know proves nothing above it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import polars as pl

from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar
from dbspc.compiler.types import INTEGER_BOUNDS
from dbspc.runtime.zset import col_name

# An interval of values: (least, greatest), EMPTY when every value is NULL, or None when
# nothing is known (any value of the type).
Interval = tuple[int, int] | None
EMPTY: tuple[int, int] = (1, 0)

# The calls whose own checks a proof removes (`_relievable`, and `_holds` for what each
# needs).
_ARITHMETIC = frozenset(("add", "sub", "mul", "neg", "abs"))
_DIVISIONS = frozenset(("div", "int_div", "mod", "div_or_null", "int_div_or_null", "mod_or_null"))
# Integer quotients and remainders, proven only where both operands lie within
# ±SMALL_OPERANDS: there they are computed in 64 bits from |a| // |b| and the signs, and
# neither the absolute values nor b * q can overflow.
_QUOTIENTS = frozenset(("int_div", "int_div_or_null", "mod", "mod_or_null"))
SMALL_OPERANDS = 2**52
# Calls whose value is one of their arguments' (or NULL): their interval is the hull.
_CHOOSING = frozenset(("coalesce", "greatest", "least", "nullif"))

NONE_PROVEN: frozenset[Call] = frozenset()


@functools.lru_cache(maxsize=2048)
def _columns_to_bound(exprs: tuple[Scalar, ...]) -> tuple[int, ...] | None:
    """The integer columns whose intervals a proof for `exprs` reads; None when `exprs`
    have no call a proof could relieve of its check."""
    columns: set[int] = set()
    checked = False

    def visit(e: Scalar) -> None:
        nonlocal checked
        if isinstance(e, Col):
            if e.type.is_integer:
                columns.add(e.index)
        elif isinstance(e, Call):
            checked = checked or _relievable(e)
            for a in e.args:
                visit(a)

    for e in exprs:
        visit(e)
    return tuple(sorted(columns)) if checked else None


def _relievable(call: Call) -> bool:
    """Whether `call` has checks of its own that a proof could remove."""
    if call.fn in _ARITHMETIC:
        return call.type.is_integer
    if call.fn == "cast":
        return call.type.is_integer and call.args[0].type.is_integer
    return call.fn in _DIVISIONS


def proven(frame: pl.DataFrame, exprs: Sequence[Scalar]) -> frozenset[Call]:
    """The calls among `exprs` whose checks cannot fire on any row of `frame` (whose
    column c{i} holds Col(i)'s values)."""
    key = tuple(exprs)
    try:
        needed = _columns_to_bound(key)
    except TypeError:  # an unhashable literal: no proof
        return NONE_PROVEN
    if needed is None or frame.height == 0:
        return NONE_PROVEN
    columns: dict[int, Interval] = {}
    names = frame.columns
    for i in needed:
        name = col_name(i)
        if name not in names:
            continue
        s = frame.get_column(name)
        if not s.dtype.is_integer():
            continue
        lo, hi = s.min(), s.max()
        columns[i] = EMPTY if lo is None else (int(lo), int(hi))  # type: ignore[arg-type]
    found: set[Call] = set()
    memo: dict[int, Interval] = {}
    for e in key:
        _interval(e, columns, memo, found)
    return frozenset(found)


def _interval(e: Scalar, columns: dict[int, Interval], memo: dict[int, Interval], found: set[Call]) -> Interval:
    """e's interval on the batch; adds the calls proven along the way to `found`."""
    if isinstance(e, Col):
        return columns.get(e.index) if e.type.is_integer else None
    if isinstance(e, Lit):
        if e.value is None:
            return EMPTY
        return (e.value, e.value) if e.type.is_integer and isinstance(e.value, int) else None
    if not isinstance(e, Call):
        return None
    got = memo.get(id(e), False)
    if got is not False:
        return got  # type: ignore[return-value]
    args = [_interval(a, columns, memo, found) for a in e.args]
    value = _call_interval(e, args)
    if _relievable(e):
        if _holds(e, args, value):
            found.add(e)
        elif e.type.is_integer and value is not None:
            value = _clip(value, e.type.kind)  # where it does not fit, the check raises
    memo[id(e)] = value if e.type.is_integer else None
    return memo[id(e)]


def _call_interval(e: Call, args: list[Interval]) -> Interval:
    """The exact interval of e's integer value from its arguments' (before any check)."""
    fn = e.fn
    if not e.type.is_integer:
        return None
    if fn in ("add", "sub", "mul"):
        a, b = args
        if a is None or b is None:
            return None
        if a == EMPTY or b == EMPTY:
            return EMPTY
        if fn == "add":
            return (a[0] + b[0], a[1] + b[1])
        if fn == "sub":
            return (a[0] - b[1], a[1] - b[0])
        products = [x * y for x in a for y in b]
        return (min(products), max(products))
    if fn == "neg":
        (a,) = args
        return a if a is None or a == EMPTY else (-a[1], -a[0])
    if fn == "abs":
        (a,) = args
        if a is None or a == EMPTY:
            return a
        lo, hi = a
        return (0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), max(abs(lo), abs(hi)))
    if fn in ("cast", "try_cast"):
        return args[0] if e.args[0].type.is_integer else None
    if fn in ("int_div", "int_div_or_null"):  # truncated toward zero
        a, b = args
        if not e.args[1].type.is_integer:  # a divisor below 1 (DIV 0.25) makes |q| > |a|
            return None
        if a is None or a == EMPTY or b == EMPTY:
            return a if a is None else EMPTY
        if b is not None and _nonzero(b):  # monotone in each operand: the corners bound it
            corners = [_truncated(x, y) for x in a for y in b]
            return (min(corners), max(corners))
        m = max(abs(a[0]), abs(a[1]))  # |q| <= |a| for any nonzero b
        return (-m, m)
    if fn in ("mod", "mod_or_null"):  # |r| < |b| and |r| <= |a|, with a's sign
        a = args[0]
        if a is None or a == EMPTY:
            return a
        m = max(abs(a[0]), abs(a[1]))
        return (-m if a[0] < 0 else 0, m if a[1] > 0 else 0)
    if fn in _CHOOSING:
        chosen = args[:1] if fn == "nullif" else args
        return _hull(chosen)
    if fn == "case":  # the values are the odd arguments, and the ELSE (last, if odd count)
        values = [args[i] for i in range(1, len(args), 2)]
        if len(args) % 2 == 1:
            values.append(args[-1])
        else:
            values.append(EMPTY)  # no ELSE: NULL
        return _hull(values)
    return None


def _truncated(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _hull(parts: list[Interval]) -> Interval:
    known = [p for p in parts if p != EMPTY]
    if any(p is None for p in known):
        return None
    if not known:
        return EMPTY
    return (min(p[0] for p in known), max(p[1] for p in known))  # type: ignore[index]


def _fits(value: Interval, kind: str) -> bool:
    if value is None:
        return False
    if value == EMPTY:
        return True
    lo, hi = INTEGER_BOUNDS[kind]
    return lo <= value[0] and value[1] <= hi


def _clip(value: tuple[int, int], kind: str) -> Interval:
    if value == EMPTY:
        return value
    lo, hi = INTEGER_BOUNDS[kind]
    return (max(value[0], lo), min(value[1], hi))


def _nonzero(value: Interval) -> bool:
    return value is not None and (value == EMPTY or value[0] > 0 or value[1] < 0)


def _holds(e: Call, args: list[Interval], value: Interval) -> bool:
    """Whether the own checks of `e` (a `_relievable` call) cannot fire, given its
    arguments' intervals and its own."""
    if e.fn in _ARITHMETIC or e.fn == "cast":  # (integer-valued, as _relievable asks)
        return _fits(value, e.type.kind)
    # a division: the divisor is never zero, and an integer quotient fits its type
    divisor_known = e.args[1].type.is_integer or isinstance(e.args[1], Lit)
    nonzero = _nonzero(args[1]) if e.args[1].type.is_integer else _nonzero_literal(e.args[1])
    if not (divisor_known and nonzero):
        return False
    if e.fn in _QUOTIENTS and e.args[0].type.is_integer and e.args[1].type.is_integer:
        # then computed in 64 bits from the operands' absolute values and signs
        if not (_within(args[0], SMALL_OPERANDS) and _within(args[1], SMALL_OPERANDS)):
            return False
    return not e.type.is_integer or _fits(value, e.type.kind)


def _within(value: Interval, limit: int) -> bool:
    return value is not None and (value == EMPTY or (-limit <= value[0] and value[1] <= limit))


def _nonzero_literal(e: Scalar) -> bool:
    """A numeric literal other than zero (DECIMAL and DOUBLE divisors)."""
    if not isinstance(e, Lit) or e.value is None or isinstance(e.value, (str, bool)):
        return False
    try:
        return bool(e.value != 0)
    except TypeError:
        return False

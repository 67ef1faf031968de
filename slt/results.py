"""A query's result as the reference harness sees it: values printed as SQLite's harness prints
them, put in the record's order (`rowsort`, `valuesort`, or the query's ORDER BY for `nosort`),
hashed, and compared with the expected values.

Our views are unordered. For `nosort`, the rows are ordered by the query's ORDER BY when its
terms map to output columns (positions, output names, or the same expression; other terms of
a plain SELECT are appended as hidden columns); ties, or a query without ORDER BY, compare as
a multiset when the values are listed; a hashed result whose order cannot be reproduced counts
as unsupported "(order)".
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dbspc.slt.records import Record

DIALECT = "sqlite"


@dataclass
class Outcome:
    """A record's verdict: passed, wrong, unsupported or error."""

    status: str
    reason: str = ""
    expected: list[str] | None = None
    got: list[str] | None = None


# Formatting, as SQLite's reference harness prints values

_INT_PREFIX = re.compile(r"^\s*([+-]?\d+)")
_FLOAT_PREFIX = re.compile(r"^\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return 0
        if v <= _INT64_MIN:
            return _INT64_MIN
        if v >= _INT64_MAX:
            return _INT64_MAX
        return int(v)  # truncates toward zero
    if isinstance(v, decimal.Decimal):
        return int(v)
    if isinstance(v, str):
        m = _INT_PREFIX.match(v)
        return max(_INT64_MIN, min(_INT64_MAX, int(m.group(1)))) if m else 0
    return _to_int(str(v))


def _to_float(v: Any) -> float:
    if isinstance(v, (bool, int, float, decimal.Decimal)):
        return float(v)
    if isinstance(v, str):
        m = _FLOAT_PREFIX.match(v)
        return float(m.group(1)) if m else 0.0
    return _to_float(str(v))


def _real_fixed(v: float) -> str:
    """'%.3f' as SQLite's printf: 16 significant digits at most (then zeros), halves rounded up."""
    if not math.isfinite(v):
        return f"{v:.3f}"
    if v == 0:
        return "0.000"  # no sign on -0.0: SQLite's printf tests v < 0
    context = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP)
    d = decimal.Decimal(format(v, ".15e")).quantize(decimal.Decimal("0.001"), context=context)
    return f"{d:.3f}"


def _real_text(v: float) -> str:
    """SQLite's text of a REAL: 15 significant digits, always with a decimal point."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    s = format(v, ".15g")
    if "e" in s:
        mantissa, exponent = s.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}e{exponent}"
    return s if "." in s else s + ".0"


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return _real_text(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def format_value(v: Any, letter: str) -> str:
    """One value as the reference harness prints it for column type `letter`."""
    if v is None:
        return "NULL"
    if letter == "I":
        s = str(_to_int(v))
    elif letter == "R":
        s = _real_fixed(_to_float(v))
    else:
        s = _text(v)
    if s == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in s)


def format_rows(rows: Sequence[Sequence[Any]], types: str) -> list[list[str]]:
    letters = types if types else "T"
    return [[format_value(v, letters[i] if i < len(letters) else "T") for i, v in enumerate(r)] for r in rows]


def sort_values(rows: list[list[str]], mode: str) -> list[str]:
    """The flat list of values after the record's sort mode."""
    if mode == "rowsort":
        rows = sorted(rows)
    flat = [v for r in rows for v in r]
    if mode == "valuesort":
        flat.sort()
    return flat


def md5_of(values: Sequence[str]) -> str:
    h = hashlib.md5()
    for v in values:
        h.update(v.encode())
        h.update(b"\n")
    return h.hexdigest()


def matches(values: list[str], record: Record) -> bool:
    if not record.has_result:
        return True
    if record.expected_hash is not None:
        count, digest = record.expected_hash
        return len(values) == count and md5_of(values) == digest
    return values == record.expected


# ---------------------------------------------------------------------------------------
# ORDER BY for nosort queries


@dataclass
class OrderPlan:
    sql: str  # the view's query, maybe with hidden columns appended
    terms: list[tuple[int, bool, bool]]  # (column, desc, nulls_first); a hidden column counts from the end
    hidden: int = 0


def order_plan(sql: str, tree: exp.Expr) -> OrderPlan | None:
    """How to order the view's rows as the query's ORDER BY, if we can."""
    order = tree.args.get("order")
    if not isinstance(order, exp.Order) or not order.expressions:
        return None
    first = tree
    while isinstance(first, exp.SetOperation):
        first = first.this
    outputs = list(first.expressions) if isinstance(first, exp.Select) else []
    names = [o.alias_or_name.lower() if not isinstance(o, exp.Star) else "*" for o in outputs]
    bare = [(o.this if isinstance(o, exp.Alias) else o).sql(DIALECT) for o in outputs]
    star = any(isinstance(o, exp.Star) or (isinstance(o, exp.Column) and isinstance(o.this, exp.Star)) for o in outputs)
    terms: list[tuple[int, bool, bool]] = []
    extra: list[exp.Expr] = []
    for ordered in order.expressions:
        e = ordered.this
        desc = bool(ordered.args.get("desc"))
        nulls_first = bool(ordered.args.get("nulls_first")) if ordered.args.get("nulls_first") is not None else not desc
        index: int | None = None
        if isinstance(e, exp.Literal) and e.is_int:
            index = int(e.name) - 1
        elif not star and isinstance(e, exp.Column) and not e.table and e.name.lower() in names:
            index = names.index(e.name.lower())
        elif not star and e.sql(DIALECT) in bare:
            index = bare.index(e.sql(DIALECT))
        if index is None:
            if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
                return None
            extra.append(e)
            terms.append((-len(extra), desc, nulls_first))
        else:
            terms.append((index, desc, nulls_first))
    if not extra:
        return OrderPlan(sql, terms)
    rewritten = tree.copy()
    assert isinstance(rewritten, exp.Select)
    for e in extra:
        rewritten = rewritten.select(e.copy(), append=True, copy=False)
    return OrderPlan(rewritten.sql(DIALECT), terms, hidden=len(extra))


def _sort_key(column: int, null_rank: int) -> Callable[[tuple[Any, ...]], tuple[int, Any]]:
    def key(row: tuple[Any, ...]) -> tuple[int, Any]:
        v = row[column]
        return (null_rank, 0) if v is None else (1, v)

    return key


def order_rows(rows: list[tuple[Any, ...]], plan: OrderPlan) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows in ORDER BY order, and whether ties leave some order undecided."""
    width = len(rows[0]) if rows else 0
    # term -k names the k-th hidden column, appended after the query's own columns
    columns = [i if i >= 0 else width - plan.hidden - i - 1 for i, _, _ in plan.terms]
    out = list(rows)
    for c, (_, desc, nulls_first) in reversed(list(zip(columns, plan.terms, strict=True))):
        out.sort(key=_sort_key(c, 0 if nulls_first != desc else 2), reverse=desc)
    keys = [tuple(r[c] for c in columns) for r in out]
    ties = any(keys[j] == keys[j + 1] and out[j] != out[j + 1] for j in range(len(out) - 1))
    return out, ties


Sink = Callable[[dict[str, Any]], None]


def compare(rec: Record, rows: list[tuple[Any, ...]], plan: OrderPlan | None) -> Outcome:
    """Check a query's rows (raw values, with duplicates) against the record's expected values."""
    hidden = plan.hidden if plan is not None else 0
    width = (len(rows[0]) if rows else len(rec.types) + hidden) - hidden
    if rows and width != len(rec.types):
        return Outcome("wrong", f"{width} columns, the record expects {len(rec.types)}")
    ties = False
    if rec.sort == "nosort" and plan is not None:
        rows, ties = order_rows(rows, plan)
    shown = format_rows([r[:width] for r in rows], rec.types)
    values = sort_values(shown, rec.sort if rec.sort in ("rowsort", "valuesort") else "nosort")
    if matches(values, rec):
        return Outcome("passed")
    if rec.sort == "nosort" and len(rows) > 1 and (plan is None or ties):
        if rec.expected is None:
            return Outcome("unsupported", "(order) a hashed nosort result whose row order we cannot reproduce")
        # the order is not ours to reproduce: compare as a multiset of rows
        n = len(rec.types)
        expected_rows = [rec.expected[i : i + n] for i in range(0, len(rec.expected), n)]
        if sorted(shown) == sorted(expected_rows):
            return Outcome("passed")
    return Outcome("wrong", "result differs", _expected(rec), values)


def _expected(rec: Record) -> list[str]:
    if rec.expected_hash is not None:
        return [f"{rec.expected_hash[0]} values hashing to {rec.expected_hash[1]}"]
    return rec.expected or []

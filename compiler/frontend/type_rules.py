"""Type promotion rules of the dialects (Spark 4 by default, SQLite for sqllogictest).

sqlglot's annotate_types gives a first answer; these rules decide the types the runtime
computes in, so that results match the engine the view is written for (Spark's decimal
precision rules, integer widths, SQLite's 64-bit integers).
"""

from __future__ import annotations

import decimal

from dbspc.compiler.dialect import Semantics
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import (
    BIGINT,
    DECIMAL_CONTEXT,
    DOUBLE,
    INT,
    INTEGER_BOUNDS,
    INTEGER_KINDS,
    NULL,
    STRING,
    SqlType,
)
from dbspc.compiler.types import decimal as decimal_type

_INT_RANK = {k: i for i, k in enumerate(INTEGER_KINDS)}
# Digits needed to hold every value of an integer kind as a decimal (Spark's rule).
_INT_AS_DECIMAL = {"TINYINT": (3, 0), "SMALLINT": (5, 0), "INT": (10, 0), "BIGINT": (20, 0)}


class TypeMismatch(Exception):
    """Two types have no common type; the binder turns this into a positioned SqlError."""


def as_decimal(t: SqlType) -> tuple[int, int]:
    if t.is_decimal:
        assert t.precision is not None and t.scale is not None
        return t.precision, t.scale
    return _INT_AS_DECIMAL[t.kind]


def common_type(a: SqlType, b: SqlType, string_number: str = "spark") -> SqlType:
    """The type both sides of a comparison, CASE, COALESCE or set operation become;
    `string_number` is the dialect's rule for a STRING beside a number (Semantics)."""
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if a.is_integer and b.is_integer:
        return a if _INT_RANK[a.kind] >= _INT_RANK[b.kind] else b
    if a.is_numeric and b.is_numeric:
        if a.is_float or b.is_float:
            return DOUBLE
        (p1, s1), (p2, s2) = as_decimal(a), as_decimal(b)
        scale = max(s1, s2)
        digits = max(p1 - s1, p2 - s2) + scale
        # Spark 4 (DecimalType.boundedPreferIntegralDigits): past 38 digits the type keeps
        # the integral digits and drops fractional ones, so DECIMAL(38,0) beside
        # DECIMAL(38,18) is DECIMAL(38,0) and 1.5 meets it as 2 (checked against Spark)
        return decimal_type(min(digits, 38), max(0, scale - max(0, digits - 38)))
    if a.is_temporal and b.is_temporal:
        # Spark's findWiderDateTimeType: an instant beside a wall clock is the instant (the
        # wall clock read in the session's zone); DATE beside either is that one
        return SqlType("TIMESTAMP") if "TIMESTAMP" in (a.kind, b.kind) else SqlType("TIMESTAMP_NTZ")
    if a == STRING and b.is_temporal:
        return b
    if b == STRING and a.is_temporal:
        return a
    if (a == STRING and b.is_numeric) or (b == STRING and a.is_numeric):
        return string_beside(a if b == STRING else b, string_number)
    raise TypeMismatch(f"{a} and {b} have no common type")


def string_beside(number: SqlType, string_number: str) -> SqlType:
    """The type a STRING becomes beside `number` (Spark 4 ANSI: BIGINT beside an integer,
    so `s = 9007199254740993` is exact; DOUBLE beside a DECIMAL or float)."""
    return BIGINT if string_number == "spark" and number.is_integer else DOUBLE


def arithmetic_type(op: str, a: SqlType, b: SqlType, semantics: Semantics) -> SqlType:
    """Result type of a + b, a - b, a * b, a / b or a % b (Spark's decimal rules)."""
    if a == NULL and b == NULL:
        a = b = INT
    a = b if a == NULL else a
    b = a if b == NULL else b
    if a == STRING and b == STRING:
        return DOUBLE
    if a == STRING and b.is_numeric:
        a = string_beside(b, semantics.string_number)
    elif b == STRING and a.is_numeric:
        b = string_beside(a, semantics.string_number)
    if not (a.is_numeric and b.is_numeric):
        raise TypeMismatch(f"cannot apply '{op}' to {a} and {b}")
    if a.is_float or b.is_float:
        return DOUBLE
    if op == "/" and semantics.decimal_division == "double":
        return DOUBLE  # DuckDB: `/` is DOUBLE division, DECIMAL operands included
    if op == "/" and semantics.integer_division == "double" and not (a.is_decimal or b.is_decimal):
        return DOUBLE  # Spark: `/` on integers is true division in DOUBLE
    if a.is_integer and b.is_integer:
        if semantics.sqlite_storage:
            return BIGINT
        return common_type(a, b)
    (p1, s1), (p2, s2) = as_decimal(a), as_decimal(b)
    if op in ("+", "-"):
        scale = max(s1, s2)
        return _bounded_decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return _bounded_decimal(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(6, s1 + p2 + 1)
        return _bounded_decimal(p1 - s1 + s2 + scale, scale)
    # %: Spark's remainder keeps the narrower integral part
    scale = max(s1, s2)
    return _bounded_decimal(min(p1 - s1, p2 - s2) + scale, scale)


def _bounded_decimal(precision: int, scale: int) -> SqlType:
    """Spark's adjustment when a decimal result needs more than 38 digits."""
    if precision <= 38:
        return decimal_type(precision, scale)
    integral = precision - scale
    min_scale = min(scale, 6)
    scale = max(38 - integral, min_scale)
    return decimal_type(38, scale)


def sum_type(t: SqlType) -> SqlType:
    if t.is_integer or t == NULL:
        return BIGINT
    if t.is_decimal:
        p, s = as_decimal(t)
        return decimal_type(p + 10, s)
    if t.is_float:
        return DOUBLE
    raise TypeMismatch(f"SUM needs a numeric argument, not {t}")


def avg_type(t: SqlType) -> SqlType:
    if t.is_decimal:
        p, s = as_decimal(t)
        return decimal_type(p + 4, s + 4)
    if t.is_numeric or t == NULL:
        return DOUBLE
    raise TypeMismatch(f"AVG needs a numeric argument, not {t}")


def moment_type(t: SqlType) -> SqlType:
    """stddev and variance are DOUBLE, of any numeric argument."""
    if t.is_numeric or t == NULL:
        return DOUBLE
    raise TypeMismatch(f"STDDEV and VARIANCE need a numeric argument, not {t}")


def coerce(expr: Scalar, target: SqlType) -> Scalar:
    """`expr` as `target`, adding a cast only where the type differs."""
    if expr.type == target:
        return expr
    if isinstance(expr, Lit):
        folded = _fold_literal(expr, target)
        if folded is not None:
            return folded
    if not castable(expr.type, target):
        raise TypeMismatch(f"cannot convert {expr.type} to {target}")
    return Call(target, "cast", (expr,))


def ansi_store_assignable(source: SqlType, target: SqlType) -> bool:
    """Spark's ANSI store assignment (`Cast.canANSIStoreAssign`): what INSERT converts
    without being told to: numbers to numbers, anything to STRING, DATE and TIMESTAMP."""
    if source == target or source == NULL or target == STRING:
        return True
    if source.is_numeric and target.is_numeric:
        return True
    return source.is_temporal and target.is_temporal


_TEXTUAL = ("STRING",)


def castable(source: SqlType, target: SqlType) -> bool:
    """The casts Spark allows between the supported types."""
    s, t = source.kind, target.kind
    if s == t or s == "NULL":
        return True
    if s in _TEXTUAL or t in _TEXTUAL:
        return True  # everything converts to and from strings
    if source.is_numeric or s == "BOOLEAN":
        return target.is_numeric or t == "BOOLEAN"
    if source.is_temporal:
        # a TIMESTAMP is also seconds since the epoch; a wall clock of no zone is not
        return target.is_temporal or (s == "TIMESTAMP" and target.is_numeric)
    return False


def _fold_literal(lit: Lit, target: SqlType) -> Lit | None:
    """Numeric literals convert at compile time, so dumps show `#2 >= 100.00`."""
    v = lit.value
    if v is None:
        return Lit(target, None)
    if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
        return None
    if (target.is_float and not isinstance(v, decimal.Decimal)) or (target.is_float and lit.type.is_decimal):
        return Lit(target, float(v))
    if target.is_integer and isinstance(v, int):
        low, high = INTEGER_BOUNDS[target.kind]
        return Lit(target, v) if low <= v <= high else None
    if target.is_decimal and isinstance(v, (int, decimal.Decimal)):
        assert target.precision is not None and target.scale is not None
        q = decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-target.scale), context=DECIMAL_CONTEXT)
        if len(q.as_tuple().digits) > target.precision:
            return None
        return Lit(target, q)
    return None

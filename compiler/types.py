"""SQL types of the logical plan and their mapping to columnar (polars) dtypes.

The compiler decides every column's SQL type once, at bind time; the runtime only
follows it. Kinds are the Spark type names, so dumps read like Spark DDL.
"""

from __future__ import annotations

import decimal as _decimal
from dataclasses import dataclass, field

INTEGER_KINDS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
FLOAT_KINDS = ("FLOAT", "DOUBLE")
TIMESTAMP_KINDS = ("TIMESTAMP", "TIMESTAMP_NTZ")  # an instant, and a wall clock of no zone
TEMPORAL_KINDS = ("DATE", *TIMESTAMP_KINDS)
KINDS = (*INTEGER_KINDS, *FLOAT_KINDS, "DECIMAL", "STRING", "BOOLEAN", *TEMPORAL_KINDS, "NULL", "ARRAY")

# Python's default decimal context keeps 28 digits and rounds half to even; DECIMAL(38)
# values need more (a product of two has up to 76), and Spark rounds half up.
DECIMAL_CONTEXT = _decimal.Context(prec=100, rounding=_decimal.ROUND_HALF_UP)

# Value range of each integer kind, used for Spark's ANSI overflow checks.
INTEGER_BOUNDS = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}


@dataclass(frozen=True, slots=True)
class SqlType:
    """A SQL type: a kind from KINDS, plus precision and scale for DECIMAL.

    A STRING read from a CHAR(n) or VARCHAR(n) column carries n in `length` (and
    `fixed` for CHAR), as Spark keeps char/varchar in a string's metadata: it is the
    same type for every rule (not compared), but INSERT checks the length, CHAR pads
    to it, and a comparison with a shorter literal pads the literal.

    ARRAY has an `element` type (Spark's ARRAY<T>); arrays come only from collect_list,
    collect_set and split, and hold no NULL elements.
    """

    kind: str
    precision: int | None = None
    scale: int | None = None
    length: int | None = field(default=None, compare=False)
    fixed: bool = field(default=False, compare=False)
    element: SqlType | None = None
    # Hashed once: a circuit hash-conses its operators, whose hash covers every column's
    # type, and the runtime's caches are keyed by expressions that carry types.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown SQL type kind {self.kind!r}")
        if (self.kind == "ARRAY") != (self.element is not None):
            raise ValueError("ARRAY, and only ARRAY, has an element type")
        object.__setattr__(self, "_hash", hash((self.kind, self.precision, self.scale, self.element)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[SqlType], tuple[object, ...]]:
        # rebuilt by the constructor: a string's hash differs between processes
        return (SqlType, (self.kind, self.precision, self.scale, self.length, self.fixed, self.element))

    @property
    def is_integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    @property
    def is_float(self) -> bool:
        return self.kind in FLOAT_KINDS

    @property
    def is_decimal(self) -> bool:
        return self.kind == "DECIMAL"

    @property
    def is_numeric(self) -> bool:
        return self.is_integer or self.is_float or self.is_decimal

    @property
    def is_temporal(self) -> bool:
        return self.kind in TEMPORAL_KINDS

    @property
    def is_array(self) -> bool:
        return self.kind == "ARRAY"

    def sql(self) -> str:
        if self.kind == "DECIMAL":
            return f"DECIMAL({self.precision},{self.scale})"
        if self.element is not None:
            return f"ARRAY<{self.element.sql()}>"
        return self.kind

    def __str__(self) -> str:
        return self.sql()


TINYINT = SqlType("TINYINT")
SMALLINT = SqlType("SMALLINT")
INT = SqlType("INT")
BIGINT = SqlType("BIGINT")
FLOAT = SqlType("FLOAT")
DOUBLE = SqlType("DOUBLE")
STRING = SqlType("STRING")
BOOLEAN = SqlType("BOOLEAN")
DATE = SqlType("DATE")
TIMESTAMP = SqlType("TIMESTAMP")  # an instant, held as its UTC wall clock
TIMESTAMP_NTZ = SqlType("TIMESTAMP_NTZ")  # a wall clock of no zone, held as itself
NULL = SqlType("NULL")


def decimal(precision: int, scale: int) -> SqlType:
    """DECIMAL(p, s), with p capped at Spark's maximum of 38."""
    precision = min(precision, 38)
    return SqlType("DECIMAL", precision, min(scale, precision))


def array_of(element: SqlType) -> SqlType:
    """ARRAY<element>."""
    return SqlType("ARRAY", element=element)

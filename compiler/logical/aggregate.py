"""Aggregate calls of a GROUP BY, shared by the logical plan and the circuit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dbspc.compiler.types import SqlType

# The moments aggregates (variance and standard deviation, sample and population) are
# re-evaluated from the group's value multiset, in DOUBLE as Spark computes them.
MOMENTS = ("var_samp", "var_pop", "stddev_samp", "stddev_pop")
# collect_list / collect_set (Spark) build an ARRAY from the group's value multiset.
COLLECTS = ("collect_list", "collect_set")
# percentile(x, p) and median(x) (Spark's exact percentile, DOUBLE), from the multiset too.
QUANTILES = ("percentile",)
# listagg(x, sep) WITHIN GROUP (ORDER BY x): the group's strings in order, joined.
JOINS = ("listagg",)
# mode(x, true) and mode() WITHIN GROUP (ORDER BY x [DESC]): the group's most frequent
# value, the lowest (highest) of those that tie, from the multiset too.
MODES = ("mode",)
# bit_and / bit_or / bit_xor of integers: and and or are not invertible, and xor counts
# each copy, so they too read the multiset (xor: the values held an odd number of times).
BITWISE = ("bit_and", "bit_or", "bit_xor")
AGGREGATES = (
    "count_star", "count", "sum", "avg", "min", "max", *MOMENTS, *COLLECTS, *QUANTILES, *JOINS, *MODES, *BITWISE
)  # fmt: skip
# Aggregates whose value is a sum over rows, so a change touches a group in O(1):
# DBSP §7.2 (a_SUM, a_COUNT are linear). MIN and MAX need the group's multiset.
LINEAR_AGGREGATES = ("count_star", "count", "sum", "avg")


@dataclass(frozen=True, slots=True)
class AggCall:
    """`fn` over input column `arg` (None for COUNT(*)), typed as SQL says.

    SQL semantics: COUNT(*) counts rows; COUNT(x) counts non-NULL x; SUM, AVG, MIN and
    MAX ignore NULLs and give NULL when no non-NULL value is left. `distinct` applies
    the aggregate to the distinct non-NULL values of the group. `fraction` is
    percentile's constant percentage; `separator` is listagg's, `descending` listagg's
    and mode's (the highest of the most frequent values).
    """

    fn: str
    arg: int | None
    type: SqlType
    distinct: bool = False
    fraction: float | None = None
    separator: str | None = None
    descending: bool = False

    def __post_init__(self) -> None:
        if self.fn not in AGGREGATES:
            raise ValueError(f"unknown aggregate {self.fn!r}")

    def __str__(self) -> str:
        if self.fn == "count_star":
            return "count(*)"
        d = "distinct " if self.distinct else ""
        fraction = f", {self.fraction!r}" if self.fraction is not None else ""
        if self.separator is not None:
            fraction = f", {self.separator!r}{' desc' if self.descending else ''}"
        elif self.descending:
            fraction = " desc"
        return f"{self.fn}({d}#{self.arg}{fraction})"


def is_running_sum(call: AggCall, in_type: SqlType | None) -> bool:
    """Whether the incremental aggregate keeps `call` as a running sum per group (§7.2),
    given its argument's type (None: not known, as for COUNT(*)). Floating-point SUM and
    AVG are not: adding and later subtracting 1e17 loses the 0.5 beside it, so they are
    re-evaluated from the group's value multiset, as recomputation would."""
    if call.fn in ("sum", "avg") and in_type is not None and in_type.is_float:
        return False
    return call.fn in LINEAR_AGGREGATES and not call.distinct


# Kinds whose values are int64s in their own order (DECIMAL: up to 18 digits, unscaled).
_ORDERED_KINDS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "BOOLEAN")


def ordered_as_int64(t: SqlType) -> bool:
    return t.kind in _ORDERED_KINDS or (t.kind == "DECIMAL" and (t.precision or 38) <= 18)


def has_ordered_index(group_types: Sequence[SqlType], value_type: SqlType | None) -> bool:
    """Whether an incremental MIN/MAX over `value_type`, grouped by `group_types`, keeps
    its values ordered per group (runtime/kernels/extrema_index.py), so that deleting a
    group's extreme costs O(log) and not the group: values ordered as int64, keys that
    are such values or strings (compared only for equality)."""
    return (
        value_type is not None
        and ordered_as_int64(value_type)
        and all(ordered_as_int64(t) or t.kind == "STRING" for t in group_types)
    )

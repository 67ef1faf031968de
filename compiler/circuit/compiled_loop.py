"""Which recursion scopes run their inner loop in compiled code, and why the others do not.

runtime/nested_compiled.py runs a scope's iterations in C++ over rows of int64; the
incrementality report says, per scope, whether it will. Both ask here, so the report
cannot promise what the runtime does not do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbspc.compiler.types import INTEGER_KINDS, TEMPORAL_KINDS

if TYPE_CHECKING:
    from dbspc.compiler.circuit.operators import ScopeIncremental

# SQL kinds held as one int64 each: integers and BOOLEAN as themselves, DATE as days,
# TIMESTAMPs as microseconds, STRING by its code in the scope's dictionary. A FLOAT or
# DOUBLE is not (-0.0 and 0.0, and NaNs, are one value to SQL but not to their bits), nor
# a DECIMAL (it can pass 64 bits).
ENCODED_KINDS = frozenset((*INTEGER_KINDS, *TEMPORAL_KINDS, "BOOLEAN", "STRING"))

# The nested aggregates the loop computes: over rows without NULLs COUNT and COUNT(x)
# count rows, and MIN/MAX compare values (of any kind but STRING, whose codes are not
# ordered). SUM and AVG would need Spark's overflow errors and its double sums.
AGGREGATES = ("count_star", "count", "min", "max")


def blocker(scope: ScopeIncremental) -> str | None:
    """Why the scope's inner loop cannot run compiled, or None when it can."""
    for o in scope.body:
        if not o.types:
            return f"{o.kind} has no columns"
        for t in o.types:
            if t.kind not in ENCODED_KINDS:
                return f"a {t.sql()} column"
        if o.kind in ("scope", "scope_incremental"):
            return "a scope inside the scope"
        if o.kind == "aggregate_nested":
            if o.is_global:  # type: ignore[attr-defined]
                return "a global aggregate inside the recursion"
            input_types = scope.body[o.inputs[0]].types
            for a in o.aggs:  # type: ignore[attr-defined]
                if a.fn not in AGGREGATES or a.distinct:
                    return f"{a.fn.upper()}{' DISTINCT' if a.distinct else ''} inside the recursion"
                if a.fn in ("min", "max") and input_types[a.arg].kind == "STRING":
                    return f"{a.fn.upper()} of a STRING inside the recursion"
    return None

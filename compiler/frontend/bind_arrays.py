"""Spark's functions over ARRAY values (which come from collect_list / collect_set and split).

Rules receive the sqlglot node and `bind` (binds a subexpression in the caller's scope).
- size(a), array_size(a): the number of elements, INT; NULL for a NULL array (Spark 4,
  ANSI mode; -1 only with the legacy setting, which ANSI mode overrides).
- array_contains(a, v): whether v is an element; NULL if a or v is NULL. v must have
  the element type, or one that widens to it.
- sort_array(a[, asc]): the elements sorted, ascending unless `asc` is the constant
  FALSE; array_sort(a) sorts ascending. (Arrays here hold no NULL elements, so where
  Spark puts NULLs does not arise.)
Any other use of an ARRAY value (comparison, arithmetic, CAST, CASE, ...) is refused
by the scalar binder.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.type_rules import TypeMismatch, coerce, common_type
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import BOOLEAN, INT, SqlType

Bind = Callable[[exp.Expression], Scalar]
Rule = Callable[[exp.Expression, Bind], Scalar]

# The scalar functions that take an ARRAY argument.
ARRAY_FUNCTIONS = frozenset({"array_size", "array_contains", "sort_array", "is_null", "is_not_null"})


def _array(node: exp.Expression, bind: Bind, name: str) -> Scalar:
    a = bind(node.this)
    if a.type.kind == "NULL":
        raise SqlError(f"{name} of NULL: write a CAST", span_of(node))
    if not a.type.is_array:
        raise SqlError(f"{name} needs an ARRAY argument, not {a.type}", span_of(node))
    return a


def _size(node: exp.Expression, bind: Bind) -> Scalar:
    if node.args.get("expression") is not None:
        raise UnsupportedSql("ARRAY_SIZE with a dimension is not supported", span_of(node))
    return Call(INT, "array_size", (_array(node, bind, "SIZE"),))


def _contains(node: exp.Expression, bind: Bind) -> Scalar:
    a = _array(node, bind, "ARRAY_CONTAINS")
    v = bind(node.expression)
    element = a.type.element
    assert element is not None
    try:
        widened = common_type(element, v.type, "refuse")
    except TypeMismatch:
        widened = None
    if widened != element:
        raise SqlError(f"ARRAY_CONTAINS of an {a.type} needs a value of type {element}, not {v.type}", span_of(node))
    return Call(BOOLEAN, "array_contains", (a, coerce(v, element)))


def _sort(node: exp.Expression, bind: Bind) -> Scalar:
    if node.args.get("expression") is not None:
        raise UnsupportedSql("ARRAY_SORT with a comparator is not supported", span_of(node))
    a = _array(node, bind, "SORT_ARRAY")
    asc = node.args.get("asc")
    ascending = True
    if asc is not None:
        flag = bind(asc)
        if not isinstance(flag, Lit) or not isinstance(flag.value, bool):
            raise UnsupportedSql("the order of SORT_ARRAY must be the constant TRUE or FALSE", span_of(asc))
        ascending = flag.value
    return Call(a.type, "sort_array", (a, Lit(BOOLEAN, ascending)))


RULES: dict[type[exp.Expression], Rule] = {
    exp.ArraySize: _size,
    exp.ArrayContains: _contains,
    exp.ArraySort: _sort,
}


def refuse_array(t: SqlType, what: str, node: exp.Expression | None) -> None:
    """ARRAY values are not compared here, so they cannot be keys: refuse `what`."""
    if t.is_array:
        raise UnsupportedSql(f"an ARRAY value as {what} is not supported", span_of(node))

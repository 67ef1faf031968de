"""Aggregate calls and grouping sets, reduced to what the Aggregate plan node computes.

The plan node knows COUNT(*), COUNT, SUM, AVG, MIN and MAX (compiler/logical/aggregate.py).
Spark's other forms are rewritten into those, each exact:
- `agg(x) FILTER (WHERE c)` is `agg(CASE WHEN c THEN x END)` (aggregates skip NULLs), and
  `COUNT(*) FILTER (WHERE c)` is `COUNT(CASE WHEN c THEN 1 END)`;
- `count_if(c)` is `COUNT(CASE WHEN c THEN 1 END)` (0 on no rows, as Spark);
- `bool_and`/`every` is MIN and `bool_or`/`some`/`any` is MAX over BOOLEAN (FALSE < TRUE).
stddev/stddev_samp/stddev_pop and variance/var_samp/var_pop are aggregates of their own
(DOUBLE, from the group's values), and so are collect_list/array_agg and collect_set
(an ARRAY of the group's non-NULL values, sorted ascending: Spark leaves the order open)
and percentile(x, p) / median(x) (Spark's exact percentile, interpolated, DOUBLE), and
listagg / string_agg(x, sep) WITHIN GROUP (ORDER BY x) (the strings in order, joined).

GROUPING SETS, ROLLUP and CUBE list the key subsets to group by; the binder aggregates
once per set and adds the results (UNION ALL), keys outside a set being NULL, with a
grouping id whose bit for key i (first key most significant) is 1 when the key is
aggregated away, as Spark's `grouping_id()`.
"""

from __future__ import annotations

import itertools

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import span_of, written_name

# What the Aggregate node computes, by sqlglot class.
CORE: dict[type[exp.Expression], str] = {
    exp.Stddev: "stddev_samp",
    exp.StddevSamp: "stddev_samp",
    exp.StddevPop: "stddev_pop",
    exp.Variance: "var_samp",
    exp.VariancePop: "var_pop",
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
    exp.ArrayAgg: "collect_list",  # Spark's collect_list and array_agg
    exp.ArrayUniqueAgg: "collect_set",
    exp.Quantile: "percentile",  # Spark's percentile(x, p)
    exp.Median: "percentile",  # median(x) is percentile(x, 0.5)
    exp.GroupConcat: "listagg",  # listagg / string_agg ... WITHIN GROUP (ORDER BY x)
    exp.Mode: "mode",  # mode(x, true); mode() WITHIN GROUP (ORDER BY x) is read below
    exp.BitwiseAndAgg: "bit_and",
    exp.BitwiseOrAgg: "bit_or",
    exp.BitwiseXorAgg: "bit_xor",
}
# Spark's boolean aggregates: bool_and is MIN, bool_or is MAX (FALSE < TRUE).
_BOOLEAN: dict[type[exp.Expression], str] = {exp.LogicalAnd: "min", exp.LogicalOr: "max"}
_BOOLEAN_NAMES = {"every": "min", "bool_and": "min", "some": "max", "any": "max", "bool_or": "max"}
AGGREGATE_NODES: tuple[type[exp.Expression], ...] = (*CORE, *_BOOLEAN, exp.CountIf)


def is_aggregate_call(node: exp.Expression) -> bool:
    """An aggregate call, possibly with FILTER (WHERE ...)."""
    if isinstance(node, exp.Filter):
        return is_aggregate_call(node.this)
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in _BOOLEAN_NAMES
    if isinstance(node, exp.WithinGroup):
        return type(node.this) is exp.Mode
    # by exact class: sqlglot subclasses some (ApproxQuantile is a Quantile) for functions
    # that are not these aggregates
    return type(node) in AGGREGATE_NODES


def reduce_call(node: exp.Expression) -> tuple[str, exp.Expression | None, bool, exp.Expression]:
    """(core function, argument or None for COUNT(*), DISTINCT, the call as written).

    The argument is rewritten so that FILTER, count_if and the boolean aggregates become
    one of the core functions over it."""
    cond: exp.Expression | None = None
    call = node
    if isinstance(node, exp.Filter):
        where = node.expression
        cond = where.this if isinstance(where, exp.Where) else where
        call = node.this
    distinct = False
    if isinstance(call, exp.CountIf):
        fn, arg = "count", _when(call.this, exp.Literal.number(1))
    elif isinstance(call, exp.Anonymous):
        fn, arg = _BOOLEAN_NAMES[call.name.lower()], _only_argument(call)
    elif type(call) in _BOOLEAN:
        fn, arg = _BOOLEAN[type(call)], call.this
    elif isinstance(call, exp.WithinGroup):  # mode() WITHIN GROUP (ORDER BY x)
        fn, arg = "mode", _mode_order(call).this
    else:
        fn, arg = CORE[type(call)], call.this
        if isinstance(call, exp.GroupConcat) and isinstance(arg, exp.Order):
            arg = arg.this  # WITHIN GROUP (ORDER BY ...): the binder reads the order from the call
        if isinstance(arg, exp.Distinct):
            distinct = True
            if fn == "mode":  # Spark: INVALID_WITHIN_GROUP_EXPRESSION.DISTINCT_UNSUPPORTED
                raise SqlError("MODE does not take DISTINCT", span_of(call))
            if not arg.expressions:
                raise SqlError(f"{fn.upper()}(DISTINCT) needs an argument", span_of(call))
            if len(arg.expressions) > 1 and fn != "count":
                raise SqlError(f"{fn.upper()}(DISTINCT ...) takes one argument", span_of(call))
            arg = arg.expressions[0] if len(arg.expressions) == 1 else _tuple_key(arg.expressions)
            if isinstance(arg, exp.Star):
                raise SqlError("COUNT(DISTINCT *) is not allowed; name the columns", span_of(call))
        if isinstance(arg, exp.Star):
            arg = None
    if cond is not None:
        arg = _when(cond, exp.Literal.number(1) if arg is None else arg)
        fn = "count" if fn == "count" else fn
    return fn, arg, distinct, call


def _tuple_key(items: list[exp.Expression]) -> exp.Expression:
    """COUNT(DISTINCT a, b) counts the distinct tuples with no NULL member: one STRING
    per tuple, NULL if a member is NULL, and injective on the rest (each member's text
    prefixed by its length, so ('a:', 'b') and ('a', ':b') stay apart)."""
    parts: list[exp.Expression] = []
    for item in items:
        text = exp.cast(item.copy(), exp.DataType.build("STRING"))
        parts += [exp.Length(this=text.copy()), exp.Literal.string(":"), text]
    any_null = exp.or_(*(exp.Is(this=i.copy(), expression=exp.Null()) for i in items))
    return exp.Case(ifs=[exp.If(this=exp.Not(this=exp.Paren(this=any_null)), true=exp.Concat(expressions=parts))])


def _when(cond: exp.Expression, value: exp.Expression) -> exp.Expression:
    return exp.Case(ifs=[exp.If(this=cond.copy(), true=value.copy())])


def _mode_order(call: exp.WithinGroup) -> exp.Ordered:
    """The one ORDER BY key of mode() WITHIN GROUP (ORDER BY x [DESC])."""
    order = call.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    if call.this.this is not None or len(keys) != 1 or not isinstance(keys[0], exp.Ordered):
        raise SqlError("mode() WITHIN GROUP takes no argument and orders by one value", span_of(call))
    key: exp.Ordered = keys[0]
    return key


def mode_descending(call: exp.Expression) -> bool:
    """Whether mode `call` gives the highest of the values that tie (WITHIN GROUP (ORDER BY
    x DESC)) rather than the lowest. Spark's mode(x) and mode(x, false) give any of them,
    which no answer can match: refused, pointing at the forms that say which."""
    if isinstance(call, exp.WithinGroup):
        return bool(_mode_order(call).args.get("desc"))
    assert isinstance(call, exp.Mode)
    flag = call.args.get("deterministic")
    if flag is not None and not isinstance(flag, exp.Boolean):
        raise SqlError("the second argument of mode must be the literal TRUE or FALSE", span_of(flag))
    if flag is None or not flag.this:
        raise UnsupportedSql(
            f"{written_name(call)}(x) without TRUE as its second argument gives any one of the most frequent "
            "values when several tie (Spark); write mode(x, true) for the lowest of them, or "
            "mode() WITHIN GROUP (ORDER BY x [DESC])",
            span_of(call),
        )
    return False


def _only_argument(call: exp.Anonymous) -> exp.Expression:
    if len(call.expressions) != 1:
        raise SqlError(f"{call.name.upper()} takes one argument", span_of(call))
    arg: exp.Expression = call.expressions[0]
    return arg


def grouping_sets(group: exp.Group | None) -> tuple[list[exp.Expression], list[tuple[int, ...]] | None]:
    """The distinct key expressions of GROUP BY, and the key subsets to group by (indexes
    into the keys, in Spark's order), or None for a plain GROUP BY."""
    if group is None:
        return [], None
    keys: list[exp.Expression] = []

    def index(node: exp.Expression) -> int:
        while isinstance(node, exp.Paren):
            node = node.this
        for i, k in enumerate(keys):
            if k.sql() == node.sql():
                return i
        keys.append(node)
        return len(keys) - 1

    # Each GROUP BY item contributes a list of alternatives; the sets are their product.
    factors: list[list[tuple[int, ...]]] = []
    plain = True
    for item in group.expressions:
        if isinstance(item, exp.Rollup):
            cols = [index(e) for e in item.expressions]
            factors.append([tuple(cols[:k]) for k in range(len(cols), -1, -1)])
            plain = False
        elif isinstance(item, exp.Cube):
            cols = [index(e) for e in item.expressions]
            factors.append(_cube(cols))
            plain = False
        elif isinstance(item, exp.GroupingSets):
            factors.append([_set(e, index) for e in item.expressions])
            plain = False
        else:
            factors.append([(index(item),)])
    for modifier, expand in (("rollup", "rollup"), ("cube", "cube")):
        if group.args.get(modifier):  # GROUP BY a, b WITH ROLLUP / WITH CUBE
            cols = [i for f in factors for i in f[0]]
            factors = [[tuple(cols[:k]) for k in range(len(cols), -1, -1)] if expand == "rollup" else _cube(cols)]
            plain = False
    if group.args.get("grouping_sets"):
        raise UnsupportedSql("this GROUPING SETS form is not supported", span_of(group))
    if plain:
        return keys, None
    sets = [
        tuple(sorted(set(itertools.chain.from_iterable(combo)), key=lambda i: i))
        for combo in itertools.product(*factors)
    ]
    return keys, sets


def _cube(cols: list[int]) -> list[tuple[int, ...]]:
    """All subsets, in Spark's order: the full set first, then by bit pattern."""
    n = len(cols)
    return [tuple(c for j, c in enumerate(cols) if not (mask >> (n - 1 - j)) & 1) for mask in range(2**n)]


def _set(node: exp.Expression, index: object) -> tuple[int, ...]:
    assert callable(index)
    if isinstance(node, exp.Tuple):
        return tuple(index(e) for e in node.expressions)
    return (index(node),)

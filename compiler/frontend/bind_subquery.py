"""Subqueries in expressions (EXISTS, IN (subquery), scalar), decorrelated into joins,
distinct and aggregates, so they are incremental like any other plan.

Each subquery becomes one extra column of the outer relation O, its value for that row
(a "mark"); the expression that contains it then reads that column, so NOT, OR, CASE
and NULL logic around a subquery need nothing special.

Magic sets: the correlation values of O (the outer columns the subquery reads, and the
probe of IN) are collected as D = distinct(π_corr O). The subquery is bound with D as
one more FROM item (its correlated references renamed to D's columns), so equality
correlations become equi-join keys and the others filters. Grouped by D's columns it
gives a table T with one row per correlation value: the rows of D that the subquery's
body never reaches get the value of the subquery over an empty input (FALSE for EXISTS
and IN, the global aggregate of nothing for a scalar aggregate: COUNT 0, SUM NULL).
O joins T null-safely on the correlation columns: exactly one partner per outer row,
so O's multiplicities are kept.

IN follows SQL's NULL rules: `x IN (s)` is TRUE if some s = x, else NULL if some
comparison was NULL (x NULL, or a NULL in s) and s is not empty, else FALSE; NOT IN is
its negation (an empty s makes NOT IN true even for a NULL x).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from dbspc.compiler.errors import UnsupportedSql
from dbspc.compiler.frontend.bind_arrays import refuse_array
from dbspc.compiler.frontend.bind_outer_join import minus, null_safe_join, project_columns
from dbspc.compiler.frontend.bind_scalar import AGGREGATE_NODES, ScalarScope, bind_scalar
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar, conjunction
from dbspc.compiler.types import BIGINT, BOOLEAN, STRING, SqlType

if TYPE_CHECKING:
    from dbspc.compiler.frontend.bind_query import QueryBinder

Columns = dict[tuple[str, str], tuple[int, SqlType]]
OUTER = "__outer"
TWO_VALUED_IN_SELECT = ("spark", "databricks", "hive")


def _is_subquery(node: exp.Expression) -> bool:
    if isinstance(node, exp.Exists):
        return True
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        return True
    return isinstance(node, exp.Subquery) and not isinstance(node.parent, (exp.From, exp.Join, exp.In))


def outermost_subqueries(node: exp.Expression) -> list[exp.Expression]:
    found: list[exp.Expression] = []

    def visit(n: exp.Expression) -> None:
        if _is_subquery(n):
            found.append(n)
            return
        for child in n.iter_expressions():
            visit(child)

    visit(node)
    return found


def has_subquery(node: exp.Expression) -> bool:
    return bool(outermost_subqueries(node))


def on_subqueries(sel: exp.Select) -> list[exp.Expression]:
    """The conjuncts of inner joins' ON that hold subqueries: `a JOIN b ON p` is
    σ_p(a × b), so they filter like WHERE conjuncts, after the FROM clause. That holds
    unless a later RIGHT or FULL join pads the rows p removes, which is refused, as is
    a subquery in the ON of an outer join."""
    from dbspc.compiler.frontend.bind_outer_join import join_side
    from dbspc.compiler.frontend.bind_query import _split_and

    joins = sel.args.get("joins") or []
    out: list[exp.Expression] = []
    for i, join in enumerate(joins):
        on = join.args.get("on")
        found = [c for c in _split_and(on) if has_subquery(c)] if on is not None else []
        if not found:
            continue
        first = outermost_subqueries(found[0])[0]
        side = join_side(join)
        if side != "INNER":
            raise UnsupportedSql(
                f"a subquery in the ON of a {side} JOIN is not supported; only inner joins may have one", span_of(first)
            )
        later = next((join_side(j) for j in joins[i + 1 :] if join_side(j) in ("RIGHT", "FULL")), None)
        if later is not None:
            raise UnsupportedSql(
                f"a subquery in ON of an inner join followed by a {later} JOIN is not supported", span_of(first)
            )
        out += found
    return out


def bind_subqueries(
    binder: QueryBinder,
    sel: exp.Select,
    rel: lp.Relation,
    columns: Columns,
    conjuncts: list[exp.Expression],
    bodies: list[exp.Expression],
    ctes: dict[str, lp.Relation],
) -> tuple[lp.Relation, dict[str, Scalar]]:
    """Add a mark column per subquery of WHERE (and of SELECT, in a query without
    aggregation; inside aggregate calls, in a query with it), filter by the WHERE
    conjuncts that hold subqueries, and return the relation and the replacements that
    let expressions read the marks. An aggregating
    query's HAVING and SELECT list read marks over its grouped rows instead
    (bind_grouped_subquery.py)."""
    from dbspc.compiler.frontend.bind_grouped_subquery import outer_aggregates, subqueries_in_aggregates
    from dbspc.compiler.frontend.bind_query import _has_aggregate, _predicate

    having = sel.args.get("having")
    aggregating = sel.args.get("group") is not None or having is not None or any(_has_aggregate(b) for b in bodies)
    nodes = [n for c in conjuncts for n in outermost_subqueries(c)]
    if aggregating:
        nodes += subqueries_in_aggregates(bodies + ([having.this] if having is not None else []))
    else:
        nodes += [n for b in bodies for n in outermost_subqueries(b)]
    for agg in outer_aggregates(nodes, {a for a, _ in columns})[:1]:
        # SQL makes `SELECT (SELECT MAX(t.x) FROM u) FROM t` an aggregating query (and
        # refuses the aggregate in WHERE): not evaluated per row, so not bound here
        raise UnsupportedSql(
            "an aggregate of outer columns inside a subquery is supported only in HAVING or in the "
            "SELECT list of a query with GROUP BY or aggregates",
            span_of(agg),
        )
    marks: dict[str, Scalar] = {}
    for node in nodes:
        key = node.sql()
        if key in marks:
            continue
        rel, value = mark(binder, rel, columns, node, ctes)
        marks[key] = Col(value, len(rel.fields) - 1)
    if conjuncts:
        scope = ScalarScope(columns, binder.semantics, dict(marks), context="WHERE")
        rel = lp.Filter(rel.fields, rel, conjunction([_predicate(bind_scalar(c, scope), c) for c in conjuncts]))
    return rel, marks if aggregating else two_valued_in(binder, marks, bodies)


def two_valued_in(binder: QueryBinder, marks: dict[str, Scalar], bodies: list[exp.Expression]) -> dict[str, Scalar]:
    """The marks as the SELECT list `bodies` reads them."""
    if binder.dialect not in TWO_VALUED_IN_SELECT:
        return marks
    # Spark evaluates IN / NOT IN (subquery) in a SELECT list by an existence join:
    # where SQL gives NULL (a NULL probe, or no match with a NULL in the subquery)
    # the value is FALSE, for IN and for NOT IN alike (checked with Spark 4.3).
    out = dict(marks)
    for b in bodies:
        for node in outermost_subqueries(b):
            if isinstance(node, exp.In) and node.sql() in marks:
                m = marks[node.sql()]
                false = Lit(BOOLEAN, False)
                out[node.sql()] = Call(BOOLEAN, "coalesce", (m, false))
                if isinstance(node.parent, exp.Not):
                    negated = Call(BOOLEAN, "not", (m,))
                    out[node.parent.sql()] = Call(BOOLEAN, "coalesce", (negated, false))
    return out


def _declared_aliases(sel: exp.Expr) -> set[str]:
    if not isinstance(sel, exp.Select):
        return set()
    out: set[str] = set()
    from_ = sel.args.get("from_")
    if from_ is not None:
        out.add(from_.this.alias_or_name.lower())
    for j in sel.args.get("joins") or []:
        out.add(j.this.alias_or_name.lower())
    return out


def outer_refs(sub: exp.Expression, outer_aliases: set[str]) -> list[exp.Column]:
    """Columns of `sub` (at any depth) that name an alias of the enclosing query and not
    one declared by a SELECT between them and `sub`'s root (inner aliases shadow)."""
    refs: list[exp.Column] = []
    for col in sub.find_all(exp.Column):
        alias = col.table.lower()
        if alias not in outer_aliases:
            continue
        node: exp.Expr | None = col
        shadowed = False
        while node is not None:
            if alias in _declared_aliases(node):
                shadowed = True
                break
            if node is sub:
                break
            node = node.parent
        if not shadowed:
            refs.append(col)
    return refs


def mark(
    binder: QueryBinder, rel: lp.Relation, columns: Columns, node: exp.Expression, ctes: dict[str, lp.Relation]
) -> tuple[lp.Relation, SqlType]:
    """rel with one more column: the value of subquery `node` for each row."""
    if isinstance(node, exp.In):
        return _mark_in(binder, rel, columns, node, ctes)
    if isinstance(node, exp.Exists):
        kind, query = "exists", node.this
    else:
        kind, query = "scalar", node.this
    query = query.copy()
    outer_aliases = {a for a, _ in columns}
    refs = outer_refs(query, outer_aliases)
    if not refs:
        return _uncorrelated(binder, rel, node, kind, query, ctes)
    if not isinstance(query, exp.Select):
        raise UnsupportedSql("a correlated subquery must be a SELECT", span_of(node))
    for key in ("group", "having"):
        if query.args.get(key) is not None:
            raise UnsupportedSql(f"{key.upper()} in a correlated subquery is not supported yet", span_of(query))
    # the correlation values: the outer columns the subquery reads
    corr: list[Scalar] = []
    names: dict[tuple[str, str], str] = {}
    for col in refs:
        ref = (col.table.lower(), col.name.lower())
        if ref not in names:
            if ref not in columns:
                raise UnsupportedSql(f"cannot resolve '{col.sql(binder.dialect)}'", span_of(col))
            i, t = columns[ref]
            refuse_array(t, "a correlated column", col)
            names[ref] = f"c{len(corr)}"
            corr.append(Col(t, i))
        col.replace(exp.column(names[ref], table=OUTER))
    # O' = O with the correlation values as columns; D = distinct(π_corr O')
    n = len(rel.fields)
    ext = lp.Project(
        rel.fields + tuple(lp.Field(f"c{k}", e.type) for k, e in enumerate(corr)),
        rel,
        tuple(Col(f.type, i) for i, f in enumerate(rel.fields)) + tuple(corr),
    )
    corr_idx = list(range(n, n + len(corr)))
    d_cols = project_columns(ext, corr_idx)
    d = lp.Distinct(d_cols.fields, d_cols)
    inner_ctes = {**ctes, OUTER: d}
    keys = [exp.column(f"c{k}", table=OUTER) for k in range(len(corr))]
    query = query.join(OUTER, copy=False) if query.args.get("from_") is not None else query.from_(OUTER, copy=False)
    if kind == "exists":
        found_q = query.select(*keys, append=False, copy=True)
        found_q.set("distinct", exp.Distinct())
        found = binder.bind(found_q, inner_ctes)
        table = _complete(d, found, Lit(BOOLEAN, True), Lit(BOOLEAN, False))
    else:
        if len(query.expressions) != 1:
            raise UnsupportedSql("a scalar subquery must return one column", span_of(node))
        body = query.expressions[0]
        body = body.this if isinstance(body, exp.Alias) else body
        if not _has_agg(body) or query.args.get("distinct") is not None:
            rows = binder.bind(query.select(*keys, body.copy(), append=False, copy=True), inner_ctes)
            table = _complete(d, _at_most_one(rows, len(keys), node), None, None)
        elif _outer_outside_aggregates(body):
            raise UnsupportedSql(
                "a correlated aggregate subquery that reads an outer column outside its aggregates "
                "is not supported yet",
                span_of(node),
            )
        else:
            grouped = query.select(*keys, body.copy(), append=False, copy=True)
            grouped.set("group", exp.Group(expressions=[k.copy() for k in keys]))
            groups = binder.bind(grouped, inner_ctes)
            empty_q = query.select(body.copy(), append=False, copy=True)
            empty_q.set("where", exp.Where(this=exp.false()))
            empty = binder.bind(empty_q, inner_ctes)  # the aggregate of no rows: one row
            table = _complete(d, groups, None, None, empty)
    joined = null_safe_join(ext, corr_idx, table, list(range(len(corr))))
    value_idx = len(ext.fields) + len(corr)
    value_type = joined.fields[value_idx].type
    out = project_columns(joined, [*range(n), value_idx])
    return out, value_type


def _mark_in(
    binder: QueryBinder, rel: lp.Relation, columns: Columns, node: exp.In, ctes: dict[str, lp.Relation]
) -> tuple[lp.Relation, SqlType]:
    """`x IN (SELECT y ...)` from three EXISTS marks, so the match is an equi-join on
    x = y (magic sets on x) rather than a comparison with every row:
    TRUE if EXISTS(... AND y = x), else NULL if EXISTS(...) and (x IS NULL or
    EXISTS(... AND y IS NULL)), else FALSE."""
    query = node.args["query"].this.copy()
    outer_aliases = {a for a, _ in columns}
    if (
        not isinstance(query, exp.Select)
        or len(query.expressions) != 1
        or any(query.args.get(k) is not None for k in ("group", "having", "distinct", "limit"))
        or any(_has_agg(e) for e in query.expressions)
    ):
        if outer_refs(query, outer_aliases):
            raise UnsupportedSql("IN over a correlated aggregating subquery is not supported yet", span_of(node))
        query = exp.select(exp.column("v", table="__in")).from_(
            exp.alias_(exp.Subquery(this=query), "__in", table=["v"])
        )
    y = query.expressions[0]
    y = y.this if isinstance(y, exp.Alias) else y
    # the probe as a column of its own alias, which no alias inside the subquery shadows
    n = len(rel.fields)
    probe = bind_scalar(node.this, ScalarScope(columns, binder.semantics, context="IN"))
    alias = f"__probe{n}"
    ext: lp.Relation = lp.Project(
        (*rel.fields, lp.Field("p", probe.type)),
        rel,
        (*(Col(f.type, i) for i, f in enumerate(rel.fields)), probe),
    )
    ext_cols = {**columns, (alias, "p"): (n, probe.type)}
    probe_col = exp.column("p", table=alias)
    conditions: list[exp.Expression | None] = [
        exp.EQ(this=y.copy(), expression=probe_col),
        None,
        exp.Is(this=y.copy(), expression=exp.Null()),
    ]
    for cond in conditions:
        q = query.select(exp.Literal.number(1), append=False, copy=True)
        if cond is not None:
            q = q.where(cond, copy=False)
        ext, _ = mark(binder, ext, ext_cols, exp.Exists(this=q), ctes)
    m_eq, m_any, m_null = (Col(BOOLEAN, n + 1 + i) for i in range(3))
    is_null = Call(BOOLEAN, "is_null", (Col(probe.type, n),))
    unknown = Call(BOOLEAN, "and", (m_any, Call(BOOLEAN, "or", (is_null, m_null))))
    value = Call(BOOLEAN, "case", (m_eq, Lit(BOOLEAN, True), unknown, Lit(BOOLEAN, None), Lit(BOOLEAN, False)))
    exprs = (*(Col(f.type, i) for i, f in enumerate(rel.fields)), value)
    return lp.Project((*rel.fields, lp.Field("in", BOOLEAN)), ext, exprs), BOOLEAN


def _complete(
    d: lp.Relation,
    found: lp.Relation,
    found_value: Scalar | None,
    missing_value: Scalar | None,
    missing_row: lp.Relation | None = None,
) -> lp.Relation:
    """One row per row of D: `found` (D's columns, then its value unless `found_value`
    gives it) and, for the rows of D that `found` lacks, `missing_value` or the one
    row of `missing_row`."""
    k = len(d.fields)
    keys = project_columns(found, list(range(k)))
    if found_value is not None:
        found = lp.Project(
            (*d.fields, lp.Field("v", found_value.type)),
            keys,
            (*tuple(Col(f.type, i) for i, f in enumerate(d.fields)), found_value),
        )
    vtype = found.fields[k].type
    lost = minus(d, keys)
    if missing_row is not None:
        vtype = found.fields[k].type
        crossed = lp.Join(lost.fields + missing_row.fields, lost, missing_row, (), ())
        filler: lp.Relation = crossed
        if missing_row.fields[0].type != vtype:
            from dbspc.compiler.frontend.type_rules import coerce

            filler = lp.Project(
                (*lost.fields, lp.Field("v", vtype)),
                crossed,
                (
                    *tuple(Col(f.type, i) for i, f in enumerate(lost.fields)),
                    coerce(Col(missing_row.fields[0].type, k), vtype),
                ),
            )
    else:
        value = missing_value if missing_value is not None else Lit(vtype, None)
        if value.type != vtype:
            value = Lit(vtype, value.value) if isinstance(value, Lit) else value
        filler = lp.Project(
            (*lost.fields, lp.Field("v", vtype)),
            lost,
            (*tuple(Col(f.type, i) for i, f in enumerate(lost.fields)), value),
        )
    fields = found.fields[: k + 1]
    return lp.UnionAll(fields, (project_columns(found, list(range(k + 1))), filler))


def _uncorrelated(
    binder: QueryBinder,
    rel: lp.Relation,
    node: exp.Expression,
    kind: str,
    query: exp.Expression,
    ctes: dict[str, lp.Relation],
) -> tuple[lp.Relation, SqlType]:
    """An uncorrelated EXISTS or scalar aggregate: one row, crossed with every outer row."""
    sub = binder.bind(query, ctes)
    if kind == "exists":
        count = lp.Aggregate((lp.Field("n", BIGINT),), sub, (), (AggCall("count_star", None, BIGINT),), True)
        one: lp.Relation = lp.Project(
            (lp.Field("exists", BOOLEAN),), count, (Call(BOOLEAN, "gt", (Col(BIGINT, 0), Lit(BIGINT, 0))),)
        )
    else:
        if len(sub.fields) != 1:
            raise UnsupportedSql("a scalar subquery must return one column", span_of(node))
        one = sub if _single_row(query) else _at_most_one(sub, 0, node)
    fields = rel.fields + one.fields
    return lp.Join(fields, rel, one, (), ()), one.fields[0].type


TOO_MANY_ROWS = "[SCALAR_SUBQUERY_TOO_MANY_ROWS] more than one row returned by a subquery used as an expression"


def _at_most_one(rows: lp.Relation, k: int, node: exp.Expression) -> lp.Relation:
    """Per value of the first k columns, the one value of column k, NULL for none; more
    than one row raises Spark's SCALAR_SUBQUERY_TOO_MANY_ROWS and rejects the step."""
    vtype = rows.fields[k].type
    refuse_array(vtype, "the value of a scalar subquery that is not an aggregate", node)  # taken by MAX
    aggs = (AggCall("count_star", None, BIGINT), AggCall("max", k, vtype))
    fields = (*rows.fields[:k], lp.Field("n", BIGINT), lp.Field("v", vtype))
    counted = lp.Aggregate(fields, rows, tuple(range(k)), aggs, is_global=k == 0)
    n = Col(BIGINT, k)
    value = Call(
        vtype,
        "error_if",
        (Call(BOOLEAN, "gt", (n, Lit(BIGINT, 1))), Col(vtype, k + 1), Lit(STRING, TOO_MANY_ROWS)),
    )
    keys = tuple(Col(f.type, i) for i, f in enumerate(rows.fields[:k]))
    return lp.Project((*rows.fields[:k], lp.Field("v", vtype)), counted, (*keys, value))


def _single_row(query: exp.Expression) -> bool:
    """Whether a query returns exactly one row: a global aggregate without HAVING."""
    if not isinstance(query, exp.Select):
        return False
    if any(query.args.get(k) is not None for k in ("group", "having", "limit")):
        return False
    return all(_has_agg(e) and not _bare_columns(e) for e in query.expressions)


def _has_agg(node: exp.Expression) -> bool:
    from dbspc.compiler.frontend.bind_query import _has_aggregate

    return _has_aggregate(node)


def _bare_columns(node: exp.Expression) -> bool:
    """Columns outside aggregate calls (not looking into subqueries)."""
    if type(node) in AGGREGATE_NODES or isinstance(node, (exp.Subquery, exp.Select)):
        return False
    if isinstance(node, exp.Column):
        return True
    return any(_bare_columns(c) for c in node.iter_expressions())


def _outer_outside_aggregates(node: exp.Expression) -> bool:
    if type(node) in AGGREGATE_NODES or isinstance(node, (exp.Subquery, exp.Select)):
        return False
    if isinstance(node, exp.Column):
        return True
    return any(_outer_outside_aggregates(c) for c in node.iter_expressions())

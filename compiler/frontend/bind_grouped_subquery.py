"""Subqueries in HAVING and in the SELECT list of an aggregating query.

Such a query is a derived table: `SELECT outputs FROM (SELECT keys, aggregates FROM ...
GROUP BY ...) WHERE having`. So the grouped relation is built first and each subquery
becomes a mark column over it (bind_subquery.py), correlated with the grouped columns:
- an outer column the subquery reads must be a GROUP BY column; it is read from the
  grouped row (in a ROLLUP row, as NULL, like the SELECT list reads it);
- an aggregate inside the subquery whose columns are all outer (`u.y < MAX(t.x)`) is an
  aggregate of the outer query (SQL's outer aggregate, as in Spark and DuckDB); it is
  computed with the others and read from the grouped row;
- any other outer column (neither grouped nor aggregated) is refused, as Spark does.
Both are rewritten into columns of a pseudo-alias of the grouped row, so the correlated
binding of bind_subquery.py applies unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_aggregate import is_aggregate_call
from dbspc.compiler.frontend.bind_subquery import Columns, mark, outer_refs, outermost_subqueries, two_valued_in
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Col, Scalar

if TYPE_CHECKING:
    from dbspc.compiler.frontend.bind_query import QueryBinder

GROUPED = "__grouped"


def _query_of(node: exp.Expression) -> exp.Expression:
    return node.args["query"] if isinstance(node, exp.In) else node.this


def _ancestors_within(node: exp.Expression, root: exp.Expression) -> list[exp.Expression]:
    """The nodes from `node`'s parent up to `root` (included)."""
    out: list[exp.Expression] = []
    parent = node.parent
    while isinstance(parent, exp.Expression):
        out.append(parent)
        if parent is root:
            break
        parent = parent.parent
    return out


def _in_aggregate(node: exp.Expression, root: exp.Expression) -> bool:
    return any(is_aggregate_call(a) for a in _ancestors_within(node, root))


def grouped_subqueries(exprs: list[exp.Expression]) -> list[exp.Expression]:
    """The subqueries evaluated over the grouped rows: those outside aggregate calls."""
    return [n for e in exprs for n in outermost_subqueries(e) if not _in_aggregate(n, e)]


def subqueries_in_aggregates(exprs: list[exp.Expression]) -> list[exp.Expression]:
    """The subqueries inside aggregate calls: evaluated per input row, before grouping,
    like WHERE's. Scalar and EXISTS only: where Spark makes an IN (subquery) in an
    aggregate's argument two-valued (as in a SELECT list) is not established here."""
    found = [n for e in exprs for n in outermost_subqueries(e) if _in_aggregate(n, e)]
    for n in found:
        if isinstance(n, exp.In):
            raise UnsupportedSql("IN (subquery) inside an aggregate function is not supported yet", span_of(n))
    return found


def outer_aggregates(nodes: list[exp.Expression], outer_aliases: set[str]) -> list[exp.Expression]:
    """Aggregate calls inside the subqueries whose columns are all of the outer query."""
    found: list[exp.Expression] = []

    def visit(n: exp.Expression, outer: set[int]) -> None:
        if is_aggregate_call(n):
            cols = list(n.find_all(exp.Column))
            if cols and all(id(c) in outer for c in cols):
                found.append(n)
                return
        for child in n.iter_expressions():
            visit(child, outer)

    for node in nodes:
        query = _query_of(node)
        visit(query, {id(c) for c in outer_refs(query, outer_aliases)})
    return found


def _rewrite(node: exp.Expression, outer_aliases: set[str], replacements: dict[str, Scalar]) -> exp.Expression:
    """A copy of subquery `node` whose outer GROUP BY expressions and outer aggregates
    read columns of the grouped row; another outer column is an error."""
    copy = node.copy()
    query = _query_of(copy)
    outer = {id(c) for c in outer_refs(query, outer_aliases)}

    def visit(n: exp.Expression, outer_level: bool) -> None:
        hit = replacements.get(n.sql())
        cols = list(n.find_all(exp.Column))
        is_outer = outer_level or (bool(cols) and all(id(c) in outer for c in cols))
        if isinstance(hit, Col) and is_outer:
            n.replace(exp.column(f"r{hit.index}", table=GROUPED))
            return
        if isinstance(n, exp.Column) and is_outer:
            raise SqlError(
                f"column '{n.name}' of the outer query must appear in GROUP BY or be used in an aggregate "
                "function to be read by a subquery of an aggregating query",
                span_of(n),
            )
        for child in list(n.iter_expressions()):
            visit(child, outer_level)

    if isinstance(copy, exp.In):
        visit(copy.this, True)
    visit(query, False)
    return copy


def bind_grouped_subqueries(
    binder: QueryBinder,
    rel: lp.Relation,
    outer_aliases: set[str],
    replacements: dict[str, Scalar],
    having: list[exp.Expression],
    bodies: list[exp.Expression],
    ctes: dict[str, lp.Relation],
) -> tuple[lp.Relation, dict[str, Scalar], dict[str, Scalar]]:
    """`rel` (the grouped relation, whose columns `replacements` name) with a mark column
    per subquery of HAVING and of the SELECT list; the marks HAVING reads, and those the
    SELECT list reads (where Spark's IN is two-valued)."""
    marks: dict[str, Scalar] = {}
    for node in grouped_subqueries(having + bodies):
        key = node.sql()
        if key in marks:
            continue
        columns: Columns = {(GROUPED, f"r{i}"): (i, f.type) for i, f in enumerate(rel.fields)}
        rel, value = mark(binder, rel, columns, _rewrite(node, outer_aliases, replacements), ctes)
        marks[key] = Col(value, len(rel.fields) - 1)
    return rel, marks, two_valued_in(binder, marks, bodies)

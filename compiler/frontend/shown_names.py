"""A view's column names with the case Spark shows them in.

dbspc's names are lower case (SQL names are case-insensitive, and Spark resolves them
so), but Spark's output schema keeps case: an alias or a column as the query writes it
(`SELECT CUSTOMERID, max(Region)` gives `CUSTOMERID`, `max(Region)`), and `*` as the
source declares it (a table's DDL, a subquery's aliases). A downstream job that reads
`row.CustomerId`, or compares schemas, sees the difference.

`shown_names` works on the query as parsed (before qualification lower-cases it) and
only ever changes case: a name it cannot derive, or one that is not the plan's name up
to case, stays the plan's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot import exp

from dbspc.compiler.frontend.spark_names import pretty_name, unparen

# A relation's shown column names by lower-case name (tables, views, CTEs in scope).
Sources = Mapping[str, tuple[str, ...]]
Namer = Callable[[exp.Expression], "str | None"]


def shown_names(query: exp.Expression, names: list[str], sources: Sources, namer: Namer) -> list[str]:
    """`names` (the plan's) with the case Spark shows; `namer` gives Spark's name of an
    unaliased expression with its columns as written (None: none)."""
    shown = _query(query, sources, namer)
    if shown is None or len(shown) != len(names):
        return names
    return [s if s is not None and s.lower() == n.lower() else n for s, n in zip(shown, names, strict=True)]


def spark_namer(datetime_column: Callable[[str], bool], relations: Mapping[str, frozenset[str]]) -> Namer:
    return lambda node: pretty_name(node, datetime_column, relations, keep_case=True)


def _query(query: exp.Expression, sources: Sources, namer: Namer) -> list[str | None] | None:
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this  # a set operation is named by its first query
    if not isinstance(query, exp.Select):
        return None
    scope = dict(sources)
    with_ = query.args.get("with_")
    for cte in with_.expressions if with_ is not None else []:
        columns = _aliased(cte, cte.this, scope, namer)
        if columns is not None:
            scope[cte.alias_or_name.lower()] = columns
        else:
            scope.pop(cte.alias_or_name.lower(), None)
    out: list[str | None] = []
    for item in query.expressions:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star):
            expanded = _star(query, item, scope, namer)
            if expanded is None:
                return None
            out.extend(expanded)
        else:
            out.append(_item(item, namer))
    return out


def _item(item: exp.Expression, namer: Namer) -> str | None:
    if isinstance(item, exp.Alias):
        return item.alias
    core = unparen(item)
    if isinstance(core, exp.Column) and isinstance(core.this, exp.Identifier):
        return core.name
    return namer(item)


def _aliased(
    alias_of: exp.Expression, query: exp.Expression, scope: Sources, namer: Namer
) -> tuple[str, ...] | None:
    """A CTE's or subquery's columns: its column list as written, or its query's names."""
    alias = alias_of.args.get("alias")
    listed = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
    if listed:
        return tuple(c.name for c in listed)
    names = _query(query, scope, namer)
    if names is None or any(n is None for n in names):
        return None
    return tuple(n for n in names if n is not None)


def _star(query: exp.Select, star: exp.Expression, scope: Sources, namer: Namer) -> list[str | None] | None:
    """The columns `*` or `t.*` expands to, in order; None where that is not plain."""
    from_ = query.args.get("from_")
    joins: list[exp.Join] = list(query.args.get("joins") or [])
    if from_ is None or any(j.args.get("using") or j.args.get("method") for j in joins):
        return None  # JOIN ... USING and NATURAL JOIN put the join columns first
    relations = [from_.this] + [j.this for j in joins if j.args.get("kind", "").upper() not in ("SEMI", "ANTI")]
    qualifier = star.table.lower() if isinstance(star, exp.Column) else ""
    out: list[str | None] = []
    for relation in relations:
        if qualifier and relation.alias_or_name.lower() != qualifier:
            continue
        columns = _relation(relation, scope, namer)
        if columns is None:
            return None
        out.extend(columns)
    return out


def _relation(relation: exp.Expression, scope: Sources, namer: Namer) -> tuple[str, ...] | None:
    if isinstance(relation, exp.Table):
        alias = relation.args.get("alias")
        listed = alias.args.get("columns") if isinstance(alias, exp.TableAlias) else None
        if listed:
            return tuple(c.name for c in listed)
        return scope.get(relation.name.lower())
    if isinstance(relation, exp.Subquery):
        return _aliased(relation, relation.this, scope, namer)
    return None

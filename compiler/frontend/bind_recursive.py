"""Bind `WITH RECURSIVE`: groups of mutually recursive CTEs become `Fixpoint`s.

CTEs of one WITH RECURSIVE that reference each other (a strongly connected component of
their references, or a CTE that references itself) form a group; the others are plain
CTEs. Each recursive CTE is `base UNION step` (set semantics: distinct in the loop, as in
DBSP §5) or `base UNION ALL step` (bag semantics, which must be linear to mean what
SQL's working-table evaluation means).
"""

from __future__ import annotations

import warnings
from typing import Protocol

from sqlglot import exp

from dbspc.compiler.dialect import Semantics
from dbspc.compiler.errors import SparkExtension, SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_window import refuse_window_in_recursion
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.type_rules import TypeMismatch, common_type
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.projections import cast_to, renamed


class QueryBinder(Protocol):
    """What recursion binding needs of the query binder (bind_query.QueryBinder), which
    passes itself in: binding the arms and the non-recursive CTEs of a WITH RECURSIVE."""

    semantics: Semantics

    def bind(self, node: exp.Expression, ctes: dict[str, lp.Relation]) -> lp.Relation: ...

    def bind_cte(self, cte: exp.CTE, ctes: dict[str, lp.Relation]) -> lp.Relation: ...


def bind_recursive_with(binder: QueryBinder, with_: exp.With, outer: dict[str, lp.Relation]) -> dict[str, lp.Relation]:
    """The relations of every CTE of a WITH RECURSIVE, in dependency order."""
    import networkx as nx  # here, not at the top: only recursive views pay its import

    nodes = {cte.alias_or_name.lower(): cte for cte in with_.expressions}
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    for name, cte in nodes.items():
        for table in cte.this.find_all(exp.Table):
            ref = table.name.lower()
            if ref in nodes:
                graph.add_edge(name, ref)
    ctes = dict(outer)
    condensed = nx.condensation(graph)
    # dependencies first: reverse topological order of "references" edges
    for comp in reversed(list(nx.topological_sort(condensed))):
        members = sorted(condensed.nodes[comp]["members"], key=list(nodes).index)
        recursive = len(members) > 1 or graph.has_edge(members[0], members[0])
        if not recursive:
            cte = nodes[members[0]]
            ctes[members[0]] = binder.bind_cte(cte, ctes)
            continue
        ctes.update(_bind_group(binder, [nodes[m] for m in members], ctes))
    return {name: ctes[name] for name in nodes}


# Spark 4 evaluates a recursive CTE's UNION ALL only; UNION (set semantics, DBSP §5) is
# dbspc's extension there, said as a warning.
_SPARK_DIALECTS = ("spark", "databricks")


def _arms(body: exp.Expression) -> tuple[list[exp.Expression], set[bool]]:
    """The UNION arms of a CTE body and the set of their distinct flags."""
    while isinstance(body, exp.Subquery):
        body = body.this
    if isinstance(body, exp.Union) and not body.args.get("with_"):
        left, lflags = _arms(body.this)
        right, rflags = _arms(body.expression)
        return left + right, lflags | rflags | {bool(body.args.get("distinct"))}
    return [body], set()


def _references(node: exp.Expression, names: set[str]) -> int:
    return sum(1 for t in node.find_all(exp.Table) if t.name.lower() in names)


def _bind_group(binder: QueryBinder, ctes: list[exp.CTE], outer: dict[str, lp.Relation]) -> dict[str, lp.Relation]:
    names = [c.alias_or_name.lower() for c in ctes]
    group = set(names)
    arms: dict[str, list[exp.Expression]] = {}
    set_semantics: dict[str, bool] = {}
    for name, cte in zip(names, ctes, strict=True):
        arms[name], flags = _arms(cte.this)
        if len(flags) > 1:
            raise UnsupportedSql(f"recursive CTE '{name}' mixes UNION and UNION ALL; use one of them", span_of(cte))
        set_semantics[name] = flags == {True}
        if set_semantics[name] and binder.semantics.dialect in _SPARK_DIALECTS:
            warnings.warn(
                SparkExtension(
                    f"recursive CTE '{name}' uses UNION, which Spark SQL refuses in a recursive CTE "
                    "(UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE); dbspc computes its least fixed point, "
                    "as PostgreSQL and DuckDB do",
                    span_of(cte),
                ),
                stacklevel=2,
            )
    fields = _infer_fields(binder, ctes, names, arms, group, outer)
    refs = {n: lp.RecursiveRef(fields[n], n, i) for i, n in enumerate(names)}
    scope = {**outer, **refs}
    bodies: list[lp.Relation] = []
    for name, cte in zip(names, ctes, strict=True):
        types = [f.type for f in fields[name]]
        bound = []
        for arm in arms[name]:
            rel = binder.bind(arm, scope)
            if len(rel.fields) != len(types):
                raise SqlError(
                    f"recursive CTE '{name}': an arm returns {len(rel.fields)} columns, not {len(types)}", span_of(arm)
                )
            bound.append(renamed(cast_to(rel, [f.type for f in fields[name]]), [f.name for f in fields[name]]))
        body: lp.Relation = bound[0] if len(bound) == 1 else lp.UnionAll(fields[name], tuple(bound))
        if set_semantics[name]:
            body = lp.Distinct(fields[name], body)
        else:
            _check_linear(name, cte, arms[name], group, body)
        _check_stratified(name, cte, body)
        refuse_window_in_recursion(name, cte, body)
        bodies.append(body)
    levels = [c.meta["max_recursion_level"] for c in ctes if "max_recursion_level" in c.meta]
    level = min(levels) if levels else None
    return {n: lp.Fixpoint(fields[n], tuple(names), tuple(bodies), i, level) for i, n in enumerate(names)}


def _infer_fields(
    binder: QueryBinder,
    ctes: list[exp.CTE],
    names: list[str],
    arms: dict[str, list[exp.Expression]],
    group: set[str],
    outer: dict[str, lp.Relation],
) -> dict[str, tuple[lp.Field, ...]]:
    """Column types come from the non-recursive arms; CTEs without one take the types of
    their recursive arms once the CTEs those read are typed."""
    fields: dict[str, tuple[lp.Field, ...]] = {}
    pending = list(zip(names, ctes, strict=True))
    while pending:
        progress = False
        for name, cte in list(pending):
            usable = [
                a
                for a in arms[name]
                if all(t.name.lower() not in group or t.name.lower() in fields for t in a.find_all(exp.Table))
            ]
            base = [a for a in usable if _references(a, group) == 0] or usable
            if not base:
                continue
            scope = {**outer, **{n: lp.RecursiveRef(f, n, names.index(n)) for n, f in fields.items()}}
            rels = [binder.bind(a, scope) for a in base]
            fields[name] = _unify(name, cte, rels, binder.semantics.string_number)
            pending.remove((name, cte))
            progress = True
        if not progress:
            raise SqlError(
                f"cannot determine the column types of recursive CTE '{pending[0][0]}': "
                "give it a non-recursive UNION arm",
                span_of(pending[0][1]),
            )
    return fields


def _unify(name: str, cte: exp.CTE, rels: list[lp.Relation], string_number: str) -> tuple[lp.Field, ...]:
    alias = cte.args.get("alias")
    columns = [c.name.lower() for c in alias.columns] if alias is not None and alias.columns else []
    first = rels[0]
    if columns and len(columns) != len(first.fields):
        raise SqlError(f"CTE '{name}' names {len(columns)} columns but returns {len(first.fields)}", span_of(cte))
    types = [f.type for f in first.fields]
    for rel in rels[1:]:
        if len(rel.fields) != len(types):
            raise SqlError(f"recursive CTE '{name}': arms return different numbers of columns", span_of(cte))
        try:
            types = [common_type(a, f.type, string_number) for a, f in zip(types, rel.fields, strict=True)]
        except TypeMismatch as e:
            raise SqlError(f"recursive CTE '{name}': {e}", span_of(cte)) from None
    names = columns or [f.name for f in first.fields]
    return tuple(lp.Field(n, t) for n, t in zip(names, types, strict=True))


def _children(rel: lp.Relation) -> list[lp.Relation]:
    """Plan inputs, and the bodies of a nested recursion."""
    return list(rel.bodies) if isinstance(rel, lp.Fixpoint) else lp.children(rel)


def _count_refs(rel: lp.Relation) -> int:
    if isinstance(rel, lp.RecursiveRef):
        return 1
    return sum(_count_refs(c) for c in _children(rel))


def _check_linear(name: str, cte: exp.CTE, arms: list[exp.Expression], group: set[str], body: lp.Relation) -> None:
    """UNION ALL recursion: each arm reads the group at most once, and not through a
    distinct or an aggregate; otherwise the fixpoint is not SQL's working-table result."""
    for arm in arms:
        if _references(arm, group) > 1:
            raise UnsupportedSql(
                f"recursive CTE '{name}' with UNION ALL reads itself twice in one arm (non-linear); "
                "use UNION for set semantics",
                span_of(arm),
            )

    def visit(rel: lp.Relation, under: str | None) -> None:
        if isinstance(rel, lp.RecursiveRef) and under:
            raise UnsupportedSql(
                f"recursive CTE '{name}' with UNION ALL reads itself under {under}; use UNION", span_of(cte)
            )
        for child in _children(rel):
            kind = {lp.Aggregate: "GROUP BY", lp.Distinct: "DISTINCT"}.get(type(rel), under)  # type: ignore[call-overload]
            visit(child, kind if not isinstance(rel, lp.Fixpoint) else under)

    visit(body, None)


def _check_stratified(name: str, cte: exp.CTE, body: lp.Relation) -> None:
    """Negation of the recursive relation (it under EXCEPT's right side) has no least
    fixpoint in general; EXCEPT over a lower stratum is fine."""

    def visit(rel: lp.Relation) -> None:
        if isinstance(rel, lp.Except) and _count_refs(rel.right):
            raise UnsupportedSql(
                f"recursive CTE '{name}' is negated by EXCEPT inside its own definition (not stratified)",
                span_of(cte),
            )
        if isinstance(rel, lp.Minus) and _count_refs(rel.right):
            raise UnsupportedSql(
                f"recursive CTE '{name}' reads itself under an outer join, NOT EXISTS, NOT IN or a "
                "subquery inside its own definition (not stratified)",
                span_of(cte),
            )
        for child in _children(rel):
            if not isinstance(rel, lp.Fixpoint):
                visit(child)

    visit(body)

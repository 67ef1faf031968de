"""Bind a qualified sqlglot query into the typed logical plan.

Joins are built left-deep in FROM order. ON and WHERE conjuncts are placed at the first
join where all their columns are available; equalities between the two sides become
equi-join keys (so `FROM a, b WHERE a.x = b.y` is an equi-join, not a cross product).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from compiler.catalog import Catalog
from compiler.errors import SqlError, UnsupportedSql
from compiler.frontend.bind_scalar import AGGREGATE_NODES, ScalarScope, bind_scalar
from compiler.frontend.positions import span_of
from compiler.frontend.type_rules import TypeMismatch, avg_type, coerce, common_type, sum_type
from compiler.logical import plan as lp
from compiler.logical.aggregate import AggCall
from compiler.logical.scalar import Col, Scalar, columns_used, conjunction
from compiler.types import BIGINT, SqlType


@dataclass
class _Item:
    """One FROM item: its relation and the alias its columns are known by."""

    relation: lp.Relation
    alias: str


class QueryBinder:
    """Binds queries of one program; `views` holds the plans of earlier views."""

    def __init__(self, catalog: Catalog, dialect: str, views: dict[str, lp.Relation]) -> None:
        self.catalog = catalog
        self.dialect = dialect
        self.views = views

    # -- queries ---------------------------------------------------------------------------

    def bind(self, node: exp.Expression, ctes: dict[str, lp.Relation]) -> lp.Relation:
        with_ = node.args.get("with_")
        if with_ is not None:
            ctes = dict(ctes)
            if with_.args.get("recursive"):
                ctes.update(bind_recursive_with(self, with_, ctes))
            else:
                for cte in with_.expressions:
                    name = cte.alias_or_name.lower()
                    ctes[name] = self._rename(self.bind(cte.this, ctes), cte)
        if isinstance(node, exp.Select):
            return self._bind_select(node, ctes)
        if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
            return self._bind_set_operation(node, ctes)
        if isinstance(node, exp.Subquery):
            return self.bind(node.this, ctes)
        raise UnsupportedSql(f"{type(node).__name__} query is not supported", span_of(node))

    def _rename(self, rel: lp.Relation, cte: exp.CTE) -> lp.Relation:
        alias = cte.args.get("alias")
        names = [c.name.lower() for c in alias.columns] if alias is not None and alias.columns else []
        if not names:
            return rel
        if len(names) != len(rel.fields):
            raise SqlError(f"CTE '{cte.alias}' names {len(names)} columns but returns {len(rel.fields)}", span_of(cte))
        fields = tuple(lp.Field(n, f.type) for n, f in zip(names, rel.fields, strict=True))
        exprs = tuple(Col(f.type, i) for i, f in enumerate(rel.fields))
        return lp.Project(fields, rel, exprs)

    def _bind_set_operation(self, node: exp.Expression, ctes: dict[str, lp.Relation]) -> lp.Relation:
        for key in ("order", "limit", "offset"):
            if node.args.get(key) is not None and key != "order":
                raise UnsupportedSql(f"{key.upper()} is not supported in a view", span_of(node.args[key]))
        left = self.bind(node.this, ctes)
        right = self.bind(node.expression, ctes)
        if len(left.fields) != len(right.fields):
            raise SqlError(
                f"{type(node).__name__.upper()} inputs have {len(left.fields)} and {len(right.fields)} columns",
                span_of(node),
            )
        try:
            types = [common_type(a.type, b.type) for a, b in zip(left.fields, right.fields, strict=True)]
        except TypeMismatch as e:
            raise SqlError(f"{e} in {type(node).__name__.upper()}", span_of(node)) from None
        left, right = _cast_to(left, types), _cast_to(right, types)
        fields = tuple(lp.Field(f.name, t) for f, t in zip(left.fields, types, strict=True))
        distinct = bool(node.args.get("distinct"))
        if isinstance(node, exp.Union):
            union = lp.UnionAll(fields, (left, right))
            return lp.Distinct(fields, union) if distinct else union
        if not distinct:
            raise UnsupportedSql(f"{type(node).__name__.upper()} ALL is not supported yet", span_of(node))
        if isinstance(node, exp.Intersect):
            return lp.Intersect(fields, left, right)
        return lp.Except(fields, left, right)

    # -- SELECT ----------------------------------------------------------------------------

    def _bind_select(self, sel: exp.Select, ctes: dict[str, lp.Relation]) -> lp.Relation:
        self._refuse_unsupported_clauses(sel)
        items = self._from_items(sel, ctes)
        where = sel.args.get("where")
        conjuncts = _split_and(where.this) if where is not None else []
        with_subqueries = [c for c in conjuncts if has_subquery(c)]
        conjuncts = [c for c in conjuncts if not has_subquery(c)]
        if has_outer_join(sel):
            rel, columns = bind_outer_from(self.dialect, sel, items, conjuncts)
        else:
            for join in sel.args.get("joins") or []:
                if join.args.get("on") is not None:
                    conjuncts += _split_and(join.args["on"])
            rel, columns = self._join_items(items, conjuncts)
        select_exprs = list(sel.expressions)
        names = [e.alias_or_name.lower() if isinstance(e, exp.Alias) else e.sql(self.dialect) for e in select_exprs]
        bodies = [e.this if isinstance(e, exp.Alias) else e for e in select_exprs]
        having = sel.args.get("having")
        group = sel.args.get("group")
        rel, marks = bind_subqueries(self, sel, rel, columns, with_subqueries, bodies, ctes)
        scope = ScalarScope(columns, self.dialect, marks, context="WHERE")
        if group is not None or having is not None or any(_has_aggregate(b) for b in bodies):
            rel, scope = self._aggregate(rel, scope, group, bodies + ([having.this] if having else []))
            if having is not None:
                scope.context = "HAVING"
                rel = lp.Filter(rel.fields, rel, _predicate(bind_scalar(having.this, scope), having))
        scope.context = "SELECT"
        exprs = tuple(bind_scalar(b, scope) for b in bodies)
        fields = tuple(lp.Field(n, e.type) for n, e in zip(names, exprs, strict=True))
        out: lp.Relation = lp.Project(fields, rel, exprs)
        if sel.args.get("distinct") is not None:
            if sel.args["distinct"].args.get("on") is not None:
                raise UnsupportedSql("DISTINCT ON is not supported", span_of(sel.args["distinct"]))
            out = lp.Distinct(fields, out)
        return out

    def _refuse_unsupported_clauses(self, sel: exp.Select) -> None:
        for key, what in (
            ("limit", "LIMIT"),
            ("offset", "OFFSET"),
            ("qualify", "QUALIFY"),
            ("laterals", "LATERAL VIEW"),
        ):
            value = sel.args.get(key)
            if value:
                node = value[0] if isinstance(value, list) else value
                raise UnsupportedSql(f"{what} is not supported in an incremental view", span_of(node))
        for window in sel.find_all(exp.Window):
            raise UnsupportedSql("window functions are not supported yet", span_of(window))
        for join in sel.args.get("joins") or []:
            join_side(join)  # refuses the join kinds that are not supported

    def _from_items(self, sel: exp.Select, ctes: dict[str, lp.Relation]) -> list[_Item]:
        from_ = sel.args.get("from_")
        if from_ is None:
            raise UnsupportedSql("SELECT without FROM is not supported in a view", span_of(sel))
        nodes = [from_.this] + [j.this for j in sel.args.get("joins") or []]
        return [self._from_item(n, ctes) for n in nodes]

    def _from_item(self, node: exp.Expression, ctes: dict[str, lp.Relation]) -> _Item:
        alias = node.alias_or_name.lower()
        if isinstance(node, exp.Subquery):
            return _Item(self.bind(node.this, ctes), alias)
        if not isinstance(node, exp.Table):
            raise UnsupportedSql(f"{type(node).__name__} in FROM is not supported", span_of(node))
        name = node.name.lower()
        if name in ctes:
            return _Item(ctes[name], alias)
        if name in self.views:
            view = self.views[name]
            return _Item(lp.Scan(view.fields, name, is_view=True), alias)
        table = self.catalog.tables.get(name)
        if table is None:
            raise SqlError(f"table or view '{node.name}' does not exist", span_of(node))
        fields = tuple(lp.Field(c.name, c.type) for c in table.columns)
        return _Item(lp.Scan(fields, name), alias)

    def _join_items(
        self, items: list[_Item], conjuncts: list[exp.Expression]
    ) -> tuple[lp.Relation, dict[tuple[str, str], tuple[int, SqlType]]]:
        """Left-deep joins; each conjunct goes to the first join that can evaluate it."""
        pending = list(conjuncts)
        rel = items[0].relation
        columns = _columns_of(items[0])
        aliases = {items[0].alias}
        rel, pending = self._apply_filters(rel, columns, aliases, pending)
        for item in items[1:]:
            if item.alias in aliases:
                raise SqlError(f"alias '{item.alias}' is used twice in FROM", None)
            offset = len(rel.fields)
            right_cols = {k: (i + offset, t) for k, (i, t) in _columns_of(item).items()}
            rel, pending = self._equi_join(rel, columns, aliases, item, right_cols, pending)
            columns = {**columns, **right_cols}
            aliases = aliases | {item.alias}
            rel, pending = self._apply_filters(rel, columns, aliases, pending)
        if pending:
            raise SqlError(f"cannot resolve '{pending[0].sql(self.dialect)}'", span_of(pending[0]))
        return rel, columns

    def _equi_join(
        self,
        left: lp.Relation,
        left_cols: dict[tuple[str, str], tuple[int, SqlType]],
        left_aliases: set[str],
        item: _Item,
        right_cols: dict[tuple[str, str], tuple[int, SqlType]],
        pending: list[exp.Expression],
    ) -> tuple[lp.Relation, list[exp.Expression]]:
        right_local = _columns_of(item)
        left_keys: list[Scalar] = []
        right_keys: list[Scalar] = []
        rest: list[exp.Expression] = []
        for c in pending:
            sides = _equi_sides(c, left_aliases, item.alias)
            if sides is None:
                rest.append(c)
                continue
            lk = bind_scalar(sides[0], ScalarScope(left_cols, self.dialect, context="ON"))
            rk = bind_scalar(sides[1], ScalarScope(right_local, self.dialect, context="ON"))
            try:
                t = common_type(lk.type, rk.type)
            except TypeMismatch as e:
                raise SqlError(f"{e} in join condition", span_of(c)) from None
            left_keys.append(coerce(lk, t))
            right_keys.append(coerce(rk, t))
        left2, lk_idx = _with_key_columns(left, left_keys)
        right2, rk_idx = _with_key_columns(item.relation, right_keys)
        fields = left2.fields + right2.fields
        joined: lp.Relation = lp.Join(fields, left2, right2, lk_idx, rk_idx)
        if len(left2.fields) != len(left.fields) or len(right2.fields) != len(item.relation.fields):
            # drop the computed key columns again, keeping the FROM column numbering
            keep = list(range(len(left.fields))) + [len(left2.fields) + i for i in range(len(item.relation.fields))]
            joined = lp.Project(tuple(fields[i] for i in keep), joined, tuple(Col(fields[i].type, i) for i in keep))
        return joined, rest

    def _apply_filters(
        self,
        rel: lp.Relation,
        columns: dict[tuple[str, str], tuple[int, SqlType]],
        aliases: set[str],
        pending: list[exp.Expression],
    ) -> tuple[lp.Relation, list[exp.Expression]]:
        ready = [c for c in pending if _aliases_of(c) <= aliases]
        if not ready:
            return rel, pending
        scope = ScalarScope(columns, self.dialect, context="WHERE")
        preds = [_predicate(bind_scalar(c, scope), c) for c in ready]
        rest = [c for c in pending if not _aliases_of(c) <= aliases]
        return lp.Filter(rel.fields, rel, conjunction(preds)), rest

    # -- GROUP BY --------------------------------------------------------------------------

    def _aggregate(
        self,
        rel: lp.Relation,
        scope: ScalarScope,
        group: exp.Group | None,
        bodies: list[exp.Expression],
    ) -> tuple[lp.Relation, ScalarScope]:
        """Pre-project group keys and aggregate arguments, aggregate, and return the
        scope in which SELECT and HAVING see group keys and aggregate results."""
        scope.context = "GROUP BY"
        group_nodes = list(group.expressions) if group is not None else []
        if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
            raise UnsupportedSql("ROLLUP, CUBE and GROUPING SETS are not supported", span_of(group))
        pre: list[Scalar] = []
        pre_names: list[str] = []
        replacements: dict[str, Scalar] = {}
        for g in group_nodes:
            key = g.sql()
            if key in replacements:
                continue
            e = bind_scalar(g, scope)
            replacements[key] = Col(e.type, len(pre))
            pre.append(e)
            pre_names.append(g.alias_or_name.lower() if isinstance(g, exp.Column) else key)
        n_group = len(pre)
        aggs: list[AggCall] = []
        agg_keys: list[str] = []
        scope.context = "an aggregate argument"
        for node in _aggregate_calls(bodies):
            key = node.sql()
            if key in agg_keys:
                continue
            call, arg = self._agg_call(node, scope, len(pre))
            if arg is not None:
                pre.append(arg)
                pre_names.append(f"arg{len(aggs)}")
            aggs.append(call)
            agg_keys.append(key)
        pre_rel = lp.Project(tuple(lp.Field(n, e.type) for n, e in zip(pre_names, pre, strict=True)), rel, tuple(pre))
        fields = pre_rel.fields[:n_group] + tuple(lp.Field(k, a.type) for k, a in zip(agg_keys, aggs, strict=True))
        agg_rel = lp.Aggregate(fields, pre_rel, tuple(range(n_group)), tuple(aggs), is_global=n_group == 0)
        for j, key in enumerate(agg_keys):
            replacements[key] = Col(aggs[j].type, n_group + j)
        post = ScalarScope(scope.columns, self.dialect, replacements, only_replacements=True)
        return agg_rel, post

    def _agg_call(self, node: exp.Expression, scope: ScalarScope, arg_index: int) -> tuple[AggCall, Scalar | None]:
        inner = node.this
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                raise UnsupportedSql("COUNT(DISTINCT a, b) is not supported", span_of(node))
            inner = inner.expressions[0]
        if isinstance(node, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
            return AggCall("count_star", None, BIGINT), None
        if any(isinstance(n, AGGREGATE_NODES) for n in inner.walk() if n is not inner) or isinstance(
            inner, AGGREGATE_NODES
        ):
            raise SqlError("aggregate calls cannot be nested", span_of(node))
        arg = bind_scalar(inner, scope)
        fn = _AGG_NAMES[type(node)]
        try:
            t = {"count": lambda: BIGINT, "sum": lambda: sum_type(arg.type), "avg": lambda: avg_type(arg.type)}.get(
                fn, lambda: arg.type
            )()
        except TypeMismatch as e:
            raise SqlError(str(e), span_of(node)) from None
        if fn in ("sum", "avg") and arg.type.kind == "NULL":
            arg = coerce(arg, t)
        return AggCall(fn, arg_index, t, distinct), arg


_AGG_NAMES: dict[type[exp.Expression], str] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}

# -- helpers -------------------------------------------------------------------------------


def _cast_to(rel: lp.Relation, types: list[SqlType]) -> lp.Relation:
    if list(rel.types) == types:
        return rel
    exprs = tuple(coerce(Col(f.type, i), t) for i, (f, t) in enumerate(zip(rel.fields, types, strict=True)))
    fields = tuple(lp.Field(f.name, t) for f, t in zip(rel.fields, types, strict=True))
    return lp.Project(fields, rel, exprs)


def _columns_of(item: _Item) -> dict[tuple[str, str], tuple[int, SqlType]]:
    cols: dict[tuple[str, str], tuple[int, SqlType]] = {}
    for i, f in enumerate(item.relation.fields):
        cols.setdefault((item.alias, f.name.lower()), (i, f.type))
    return cols


def _with_key_columns(rel: lp.Relation, keys: list[Scalar]) -> tuple[lp.Relation, tuple[int, ...]]:
    """Key expressions that are not plain columns are computed into extra columns."""
    if all(isinstance(k, Col) for k in keys):
        return rel, tuple(k.index for k in keys if isinstance(k, Col))
    exprs: list[Scalar] = [Col(f.type, i) for i, f in enumerate(rel.fields)]
    idx: list[int] = []
    for k in keys:
        if isinstance(k, Col):
            idx.append(k.index)
        else:
            idx.append(len(exprs))
            exprs.append(k)
    fields = rel.fields + tuple(lp.Field(f"key{i}", e.type) for i, e in enumerate(exprs[len(rel.fields) :]))
    return lp.Project(fields, rel, tuple(exprs)), tuple(idx)


def _split_and(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _split_and(node.this) + _split_and(node.expression)
    return [node]


def _aliases_of(node: exp.Expression) -> set[str]:
    return {c.table.lower() for c in node.find_all(exp.Column)}


def _equi_sides(c: exp.Expression, left: set[str], right: str) -> tuple[exp.Expression, exp.Expression] | None:
    """(left side, right side) if `c` is an equality between the two join inputs."""
    if not isinstance(c, exp.EQ):
        return None
    a, b = _aliases_of(c.this), _aliases_of(c.expression)
    if a and b and a <= left and b == {right}:
        return c.this, c.expression
    if a and b and b <= left and a == {right}:
        return c.expression, c.this
    return None


def _predicate(expr: Scalar, node: exp.Expression) -> Scalar:
    if expr.type.kind == "NULL":
        return coerce(expr, SqlType("BOOLEAN"))
    if expr.type.kind != "BOOLEAN":
        raise SqlError(f"a condition must be BOOLEAN, not {expr.type}", span_of(node))
    return expr


def _has_aggregate(node: exp.Expression) -> bool:
    return any(True for _ in _aggregate_calls([node]))


def _aggregate_calls(nodes: list[exp.Expression]) -> list[exp.Expression]:
    """Outermost aggregate calls, in order, not looking into subqueries."""
    found: list[exp.Expression] = []

    def visit(n: exp.Expression) -> None:
        if isinstance(n, AGGREGATE_NODES):
            found.append(n)
            return
        if isinstance(n, (exp.Subquery, exp.Select)):
            return
        for child in n.iter_expressions():
            visit(child)

    for n in nodes:
        visit(n)
    return found


from compiler.frontend.bind_outer_join import bind_outer_from, has_outer_join, join_side  # noqa: E402
from compiler.frontend.bind_recursive import bind_recursive_with  # noqa: E402  (mutual import)
from compiler.frontend.bind_subquery import bind_subqueries, has_subquery  # noqa: E402

__all__ = ["QueryBinder", "cast_to", "columns_used"]
cast_to = _cast_to

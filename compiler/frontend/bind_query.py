"""Bind a qualified sqlglot query into the typed logical plan.

Joins are built left-deep in FROM order. ON and WHERE conjuncts are placed at the first
join where all their columns are available; equalities between the two sides become
equi-join keys (so `FROM a, b WHERE a.x = b.y` is an equi-join, not a cross product).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from dbspc.compiler.catalog import Catalog
from dbspc.compiler.dialect import Semantics
from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_aggregate import CORE, grouping_sets, is_aggregate_call, mode_descending, reduce_call
from dbspc.compiler.frontend.bind_arrays import refuse_array
from dbspc.compiler.frontend.bind_grouped_subquery import bind_grouped_subqueries, grouped_subqueries, outer_aggregates
from dbspc.compiler.frontend.bind_outer_join import bind_outer_from, has_outer_join, join_side
from dbspc.compiler.frontend.bind_recursive import bind_recursive_with
from dbspc.compiler.frontend.bind_scalar import ScalarScope, bind_scalar
from dbspc.compiler.frontend.bind_subquery import bind_subqueries, has_subquery, on_subqueries
from dbspc.compiler.frontend.bind_window import bind_top_k, bind_windows, refuse_misplaced_windows, window_calls
from dbspc.compiler.frontend.positions import span_of, written_name
from dbspc.compiler.frontend.type_rules import TypeMismatch, avg_type, coerce, common_type, moment_type, sum_type
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.aggregate import BITWISE, COLLECTS, JOINS, MODES, MOMENTS, QUANTILES, AggCall
from dbspc.compiler.logical.projections import cast_to, renamed
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar, conjunction
from dbspc.compiler.types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, TINYINT, SqlType, array_of


@dataclass
class _Item:
    """One FROM item: its relation and the alias its columns are known by."""

    relation: lp.Relation
    alias: str


class QueryBinder:
    """Binds queries of one program; `views` holds the plans of earlier views."""

    def __init__(self, catalog: Catalog, semantics: Semantics, views: dict[str, lp.Relation]) -> None:
        self.catalog = catalog
        self.semantics = semantics
        self.dialect = semantics.dialect
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
                    ctes[name] = self.bind_cte(cte, ctes)
        if isinstance(node, exp.Select):
            return self._bind_select(node, ctes)
        if isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
            return self._bind_set_operation(node, ctes)
        if isinstance(node, exp.Subquery):
            return self.bind(node.this, ctes)
        raise UnsupportedSql(f"{type(node).__name__} query is not supported", span_of(node))

    def bind_cte(self, cte: exp.CTE, ctes: dict[str, lp.Relation]) -> lp.Relation:
        """A non-recursive CTE's relation, its columns named by its column list if any."""
        rel = self.bind(cte.this, ctes)
        alias = cte.args.get("alias")
        names = [c.name.lower() for c in alias.columns] if alias is not None and alias.columns else []
        if not names:
            return rel
        if len(names) != len(rel.fields):
            raise SqlError(f"CTE '{cte.alias}' names {len(names)} columns but returns {len(rel.fields)}", span_of(cte))
        return renamed(rel, names)

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
            types = [
                common_type(a.type, b.type, self.semantics.string_number)
                for a, b in zip(left.fields, right.fields, strict=True)
            ]
        except TypeMismatch as e:
            raise SqlError(f"{e} in {type(node).__name__.upper()}", span_of(node)) from None
        left, right = cast_to(left, types), cast_to(right, types)
        fields = tuple(lp.Field(f.name, t) for f, t in zip(left.fields, types, strict=True))
        distinct = bool(node.args.get("distinct"))
        if distinct or not isinstance(node, exp.Union):
            what = f"a column of {type(node).__name__.upper()}{'' if distinct else ' ALL'}"
            for t in types:
                refuse_array(t, what, node)
        if isinstance(node, exp.Union):
            union = lp.UnionAll(fields, (left, right))
            return lp.Distinct(fields, union) if distinct else union
        if isinstance(node, exp.Intersect):
            return lp.Intersect(fields, left, right, all=not distinct)
        return lp.Except(fields, left, right, all=not distinct)

    # -- SELECT ----------------------------------------------------------------------------

    def _bind_select(self, sel: exp.Select, ctes: dict[str, lp.Relation]) -> lp.Relation:
        if not sel.expressions:  # sqlglot reads `SELECT FROM t`
            raise SqlError("syntax error: SELECT lists no columns", span_of(sel))
        self._refuse_unsupported_clauses(sel)
        items = self._from_items(sel, ctes)
        where = sel.args.get("where")
        conjuncts = _split_and(where.this) if where is not None else []
        with_subqueries = [c for c in conjuncts if has_subquery(c)] + on_subqueries(sel)
        conjuncts = [c for c in conjuncts if not has_subquery(c)]
        _refuse_later_references(sel, items)
        if has_outer_join(sel):
            rel, columns = bind_outer_from(self.semantics, sel, items, conjuncts)
        else:
            for join in sel.args.get("joins") or []:
                if join.args.get("on") is not None:
                    conjuncts += [c for c in _split_and(join.args["on"]) if not has_subquery(c)]
            rel, columns = self._join_items(items, conjuncts)
        select_exprs = list(sel.expressions)
        names = [_output_name(e, self.dialect) for e in select_exprs]
        bodies = [e.this if isinstance(e, exp.Alias) else e for e in select_exprs]
        group = sel.args.get("group")
        having = _having_with_aliases(sel.args.get("having"), select_exprs, group)
        rel, marks = bind_subqueries(self, sel, rel, columns, with_subqueries, bodies, ctes)
        scope = ScalarScope(columns, self.semantics, marks, context="WHERE")
        if group is not None or having is not None or any(_has_aggregate(b) for b in bodies):
            having_list = [having.this] if having is not None else []
            aliases = {a for a, _ in columns}
            outer_aggs = outer_aggregates(grouped_subqueries(having_list + bodies), aliases)
            rel, scope = self._aggregate(rel, scope, group, bodies + having_list + outer_aggs)
            rel, having_marks, select_marks = bind_grouped_subqueries(
                self, rel, aliases, scope.replacements, having_list, bodies, ctes
            )
            if having is not None:
                hscope = ScalarScope(
                    scope.columns, self.semantics, {**scope.replacements, **having_marks}, True, "HAVING"
                )
                rel = lp.Filter(rel.fields, rel, _predicate(bind_scalar(having.this, hscope), having))
            scope.replacements.update(select_marks)
        rel, scope = self._bind_windows(sel, rel, scope, bodies)
        scope.context = "SELECT"
        exprs = tuple(bind_scalar(b, scope) for b in bodies)
        rel, exprs = self._bind_qualify(sel, rel, scope, names, exprs)
        fields = tuple(lp.Field(n, e.type) for n, e in zip(names, exprs, strict=True))
        out: lp.Relation = lp.Project(fields, rel, exprs)
        if sel.args.get("distinct") is not None:
            if sel.args["distinct"].args.get("on") is not None:
                raise UnsupportedSql("DISTINCT ON is not supported", span_of(sel.args["distinct"]))
            for f, e in zip(fields, select_exprs, strict=True):
                refuse_array(f.type, "a column of SELECT DISTINCT", e)
            out = lp.Distinct(fields, out)
        return bind_top_k(sel, out, names, self.dialect)

    # -- window functions, QUALIFY (compiler/frontend/bind_window.py) ----------------------

    def _bind_windows(
        self, sel: exp.Select, rel: lp.Relation, scope: ScalarScope, bodies: list[exp.Expression]
    ) -> tuple[lp.Relation, ScalarScope]:
        """Window nodes for the window calls of the SELECT list and QUALIFY, evaluated
        after WHERE, GROUP BY and HAVING (which may not hold any)."""
        qualify = sel.args.get("qualify")
        calls = window_calls(bodies + ([qualify.this] if qualify is not None else []))
        if not calls:
            return rel, scope
        return bind_windows(rel, scope, calls)

    def _bind_qualify(
        self,
        sel: exp.Select,
        rel: lp.Relation,
        scope: ScalarScope,
        names: list[str],
        exprs: tuple[Scalar, ...],
    ) -> tuple[lp.Relation, tuple[Scalar, ...]]:
        """QUALIFY p (Spark 4): a filter after the window functions. It may name SELECT
        aliases, so the SELECT expressions are computed first, beside the input columns."""
        qualify = sel.args.get("qualify")
        if qualify is None:
            return rel, exprs
        n = len(rel.fields)
        wide_exprs = tuple(Col(f.type, i) for i, f in enumerate(rel.fields)) + exprs
        wide_fields = rel.fields + tuple(lp.Field(nm, e.type) for nm, e in zip(names, exprs, strict=True))
        wide = lp.Project(wide_fields, rel, wide_exprs)
        input_names = {name for (_, name) in scope.columns}
        replacements = dict(scope.replacements)
        for j, (nm, e) in enumerate(zip(names, exprs, strict=True)):
            if nm not in input_names:
                replacements.setdefault(nm, Col(e.type, n + j))
        qscope = ScalarScope(scope.columns, self.semantics, replacements, scope.only_replacements, "QUALIFY")
        pred = _predicate(bind_scalar(qualify.this, qscope), qualify)
        kept = lp.Filter(wide_fields, wide, pred)
        return kept, tuple(Col(e.type, n + j) for j, e in enumerate(exprs))

    def _refuse_unsupported_clauses(self, sel: exp.Select) -> None:
        refuse_misplaced_windows(sel)
        for key, what in (("laterals", "LATERAL VIEW"),):
            value = sel.args.get(key)
            if value:
                node = value[0] if isinstance(value, list) else value
                raise UnsupportedSql(f"{what} is not supported in an incremental view", span_of(node))
        for join in sel.args.get("joins") or []:
            join_side(join)  # refuses the join kinds that are not supported

    def _from_items(self, sel: exp.Select, ctes: dict[str, lp.Relation]) -> list[_Item]:
        from_ = sel.args.get("from_")
        if from_ is None:  # one row with no columns, which the SELECT list fills
            return [_Item(lp.Values((), ((),)), "")]
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
        """Left-deep joins in an order chosen from the equi-join graph.

        Each conjunct over one FROM item filters that item before any join (pushdown); the
        next item joined is the first, in FROM order, that an equality connects to the
        items joined so far, so no keyless cross join is built when the predicates connect
        the tables. Every other conjunct goes to the first join where its columns exist.
        """
        seen: set[str] = set()
        for item in items:
            if item.alias in seen:
                raise SqlError(f"alias '{item.alias}' is used twice in FROM", None)
            seen.add(item.alias)
        pending = list(conjuncts)
        memo: AliasMemo = {}
        filtered: list[_Item] = []
        for item in items:
            rel, pending = self._apply_filters(item.relation, _columns_of(item), {item.alias}, pending, memo)
            filtered.append(_Item(rel, item.alias))
        remaining = filtered[1:]
        first = filtered[0]
        rel, columns, aliases = first.relation, _columns_of(first), {first.alias}
        while remaining:
            item = next((r for r in remaining if _connects(pending, aliases, r.alias, memo)), remaining[0])
            remaining.remove(item)
            offset = len(rel.fields)
            right_cols = {k: (i + offset, t) for k, (i, t) in _columns_of(item).items()}
            rel, pending = self._equi_join(rel, columns, aliases, item, right_cols, pending, memo)
            columns = {**columns, **right_cols}
            aliases = aliases | {item.alias}
            rel, pending = self._apply_filters(rel, columns, aliases, pending, memo)
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
        memo: AliasMemo,
    ) -> tuple[lp.Relation, list[exp.Expression]]:
        right_local = _columns_of(item)
        left_keys: list[Scalar] = []
        right_keys: list[Scalar] = []
        pairs, rest = key_pairs(pending, left_aliases, item.alias, memo)  # the rest filters after the join
        for c, left_side, right_side in pairs:
            lk = bind_scalar(left_side, ScalarScope(left_cols, self.semantics, context="ON"))
            rk = bind_scalar(right_side, ScalarScope(right_local, self.semantics, context="ON"))
            refuse_array(lk.type if lk.type.is_array else rk.type, "a join key", c)
            try:
                t = common_type(lk.type, rk.type, self.semantics.string_number)
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
        memo: AliasMemo,
    ) -> tuple[lp.Relation, list[exp.Expression]]:
        ready = [c for c in pending if _aliases_of(c, memo) <= aliases]
        if not ready:
            return rel, pending
        scope = ScalarScope(columns, self.semantics, context="WHERE")
        preds = [_predicate(bind_scalar(c, scope), c) for c in ready]
        rest = [c for c in pending if not _aliases_of(c, memo) <= aliases]
        return lp.Filter(rel.fields, rel, conjunction(preds)), rest

    # -- GROUP BY --------------------------------------------------------------------------

    def _aggregate(
        self,
        rel: lp.Relation,
        scope: ScalarScope,
        group: exp.Group | None,
        bodies: list[exp.Expression],
    ) -> tuple[lp.Relation, ScalarScope]:
        """Pre-project group keys and aggregate arguments, aggregate (once per grouping
        set), and return the scope in which SELECT and HAVING see group keys, aggregate
        results and GROUPING()."""
        scope.context = "GROUP BY"
        key_nodes, sets = grouping_sets(group)
        pre: list[Scalar] = []
        pre_names: list[str] = []
        replacements: dict[str, Scalar] = {}
        for g in key_nodes:
            e = bind_scalar(g, scope)
            refuse_array(e.type, "a GROUP BY key", g)
            replacements[g.sql()] = Col(e.type, len(pre))
            pre.append(e)
            pre_names.append(g.alias_or_name.lower() if isinstance(g, exp.Column) else g.sql())
        n_group = len(pre)
        aggs: list[AggCall] = []
        agg_keys: list[str] = []
        scope.context = "an aggregate argument"
        bare = (
            _bare_columns(bodies, set(replacements), {type(g) for g in key_nodes})
            if self.semantics.bare_columns
            else []
        )
        for node in _aggregate_calls(bodies) + [a for c in bare for a in _bare_aggregates(c)]:
            key = node.sql()
            if key in agg_keys:
                continue
            call, arg = self._agg_call(node, scope, len(pre))
            if arg is not None and arg in pre[n_group:]:
                # MIN(x) and MAX(x) read one column: the aggregate keeps x's values once
                call = replace(call, arg=n_group + pre[n_group:].index(arg))
            elif arg is not None:
                pre.append(arg)
                pre_names.append(f"arg{len(aggs)}")
            aggs.append(call)
            agg_keys.append(key)
        pre_rel = lp.Project(tuple(lp.Field(n, e.type) for n, e in zip(pre_names, pre, strict=True)), rel, tuple(pre))
        agg_fields = tuple(lp.Field(k, a.type) for k, a in zip(agg_keys, aggs, strict=True))
        fields = pre_rel.fields[:n_group] + agg_fields
        grouping_id: Scalar = Lit(BIGINT, 0)
        if sets is None:
            agg_rel: lp.Relation = lp.Aggregate(
                fields, pre_rel, tuple(range(n_group)), tuple(aggs), is_global=n_group == 0
            )
        else:
            agg_rel = _grouping_sets_union(pre_rel, n_group, sets, tuple(aggs), agg_fields)
            grouping_id = Col(BIGINT, len(fields))
        for j, key in enumerate(agg_keys):
            replacements[key] = Col(aggs[j].type, n_group + j)
        for c in bare:
            replacements[c.sql()] = _bare_value(c, replacements)
        replacements.update(_grouping_calls(bodies, key_nodes, grouping_id))
        post = ScalarScope(scope.columns, self.semantics, replacements, only_replacements=True)
        return agg_rel, post

    def _agg_call(self, node: exp.Expression, scope: ScalarScope, arg_index: int) -> tuple[AggCall, Scalar | None]:
        fn, inner, distinct, call = reduce_call(node)
        if inner is None:
            return AggCall("count_star", None, BIGINT), None
        nested = inner.walk(prune=lambda n: isinstance(n, (exp.Subquery, exp.Select)))  # a subquery is its own
        if any(isinstance(n, exp.Expression) and is_aggregate_call(n) for n in nested):
            raise SqlError("aggregate calls cannot be nested", span_of(node))
        arg = bind_scalar(inner, scope)
        if self.semantics.sqlite_storage and arg.type == STRING and (fn in ("sum", "avg") or fn in MOMENTS):
            # SQLite sums a text as the number its prefix spells ('12abc' is 12, 'x' is 0)
            arg = Call(DOUBLE, "sqlite_real", (arg,))
        boolean = not isinstance(call, (*CORE, exp.CountIf, exp.WithinGroup))  # bool_and, bool_or, every, some, any
        if boolean and arg.type.kind not in ("BOOLEAN", "NULL"):
            raise SqlError(f"{call.sql(self.dialect)} needs a BOOLEAN argument, not {arg.type}", span_of(node))
        if fn in COLLECTS:
            _check_collect(call, arg, self.dialect)
        elif arg.type.is_array and (fn != "count" or distinct):
            raise UnsupportedSql(f"{call.sql(self.dialect)} over an ARRAY is not supported", span_of(node))
        try:
            t = {
                "count": lambda: BIGINT,
                "sum": lambda: sum_type(arg.type),
                "avg": lambda: avg_type(arg.type),
                "collect_list": lambda: array_of(arg.type),
                "collect_set": lambda: array_of(arg.type),
            }.get(fn, lambda: moment_type(arg.type) if fn in MOMENTS else arg.type)()
        except TypeMismatch as e:
            raise SqlError(str(e), span_of(node)) from None
        if (fn in ("sum", "avg") or fn in MOMENTS) and arg.type.kind == "NULL":
            arg = coerce(arg, t)
        if boolean and arg.type.kind == "NULL":
            arg, t = coerce(arg, BOOLEAN), BOOLEAN
        if fn in JOINS:
            return _listagg(call, arg_index, arg, distinct), arg
        if fn in BITWISE:
            if not (arg.type.is_integer or arg.type.kind == "NULL"):  # Spark: the INTEGRAL type
                raise SqlError(f"{written_name(call)} needs an integer, not {arg.type}", span_of(node))
            t = INT if arg.type.kind == "NULL" else arg.type
            return AggCall(fn, arg_index, t, distinct), coerce(arg, t)
        if fn in MODES:
            if arg.type.kind == "NULL":
                raise SqlError(f"{written_name(call)} of an untyped NULL", span_of(node))
            return AggCall(fn, arg_index, t, descending=mode_descending(call)), arg
        if fn in QUANTILES:
            if not (arg.type.is_numeric or arg.type.kind == "NULL"):
                raise SqlError(f"{written_name(call)} needs a number, not {arg.type}", span_of(node))
            return AggCall(fn, arg_index, DOUBLE, distinct, _percentage(call)), coerce(arg, DOUBLE)
        return AggCall(fn, arg_index, t, distinct), arg


# -- helpers -------------------------------------------------------------------------------


def _listagg(call: exp.Expression, arg_index: int, arg: Scalar, distinct: bool) -> AggCall:
    """listagg(x [, sep]) WITHIN GROUP (ORDER BY x [DESC]), also string_agg: Spark joins
    the group's non-NULL strings in that order (sep defaults to ',', checked). Without an ORDER BY
    of the value itself the order Spark joins in is not a function of the data, so it is
    refused."""
    order = call.this if isinstance(call.this, exp.Order) else None
    keys = order.expressions if order is not None else []
    value = order.this if order is not None else call.this
    value = value.expressions[0] if isinstance(value, exp.Distinct) and len(value.expressions) == 1 else value
    if len(keys) != 1 or keys[0].this.sql() != value.sql():
        raise UnsupportedSql(
            f"{written_name(call)} joins in an order Spark leaves open unless it is WITHIN GROUP (ORDER BY "
            "the aggregated value); write that",
            span_of(call),
        )
    if arg.type.kind not in ("STRING", "NULL"):
        raise SqlError(f"{written_name(call)} needs a STRING, not {arg.type}; CAST it", span_of(call))
    sep = call.args.get("separator")
    if sep is not None and not (isinstance(sep, exp.Literal) and sep.is_string):
        raise UnsupportedSql(f"the delimiter of {written_name(call)} must be a string literal", span_of(sep))
    separator = sep.this if isinstance(sep, exp.Literal) else ","
    descending = bool(keys[0].args.get("desc"))
    return AggCall("listagg", arg_index, STRING, distinct, separator=separator, descending=descending)


def _percentage(call: exp.Expression) -> float:
    """percentile's constant percentage in [0, 1] (0.5 for median), as Spark requires."""
    if isinstance(call, exp.Median):
        return 0.5
    if (call.meta or {}).get("arguments", 2) > 2:
        raise UnsupportedSql(f"{written_name(call)} with a frequency argument is not supported", span_of(call))
    node = call.args.get("quantile")
    value = node.this if isinstance(node, exp.Literal) and not node.is_string else None
    try:
        fraction = float(value) if value is not None else None
    except ValueError:
        fraction = None
    if fraction is None or not 0.0 <= fraction <= 1.0:
        raise SqlError(
            f"the percentage of {written_name(call)} must be a number literal between 0.0 and 1.0",
            span_of(node if isinstance(node, exp.Expression) else call),
        )
    return fraction


def _check_collect(call: exp.Expression, arg: Scalar, dialect: str) -> None:
    """collect_list / collect_set hold non-NULL scalar values (Spark's semantics)."""
    if isinstance(call, exp.ArrayAgg) and not call.args.get("nulls_excluded"):
        # ARRAY_AGG outside Spark keeps NULLs and is NULL on no rows
        raise UnsupportedSql(
            f"ARRAY_AGG in {dialect} is not supported; Spark's collect_list (which skips NULLs) is", span_of(call)
        )
    if arg.type.kind in ("ARRAY", "NULL"):
        raise UnsupportedSql(f"{call.sql(dialect)} of a {arg.type} value is not supported", span_of(call))


def _refuse_later_references(sel: exp.Select, items: list[_Item]) -> None:
    """An ON clause sees the FROM items up to its own join, not the ones joined after it
    (Spark cannot resolve them). Inner joins' ON conjuncts are filtered with WHERE's, so
    without this check a later table would silently resolve."""
    for j, join in enumerate(sel.args.get("joins") or []):
        on = join.args.get("on")
        later = items[j + 2 :]
        if on is None or not later:
            continue
        visible = {item.alias for item in items[: j + 2]}
        visible_names = {name for item in items[: j + 2] for _, name in _columns_of(item)}
        later_aliases = {item.alias for item in later}
        later_names = {name for item in later for _, name in _columns_of(item)}
        for column in on.find_all(exp.Column):
            inner = column.find_ancestor(exp.Select)
            table = column.table.lower()
            if inner is not None and inner is not sel:
                # inside a subquery of ON: only a qualified outer reference can be checked
                own = {t.alias_or_name.lower() for t in inner.find_all(exp.Table)}
                if table and table in later_aliases and table not in own:
                    raise SqlError(_later_message(column), span_of(column))
                continue
            if table:
                if table not in visible and table in later_aliases:
                    raise SqlError(_later_message(column), span_of(column))
            elif column.name.lower() not in visible_names and column.name.lower() in later_names:
                raise SqlError(_later_message(column), span_of(column))


def _later_message(column: exp.Column) -> str:
    name = f"{column.table}.{column.name}" if column.table else column.name
    return f"column '{name}' cannot be resolved in this ON clause: its table is joined after it"


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


def _having_with_aliases(
    having: exp.Having | None, selects: list[exp.Expression], group: exp.Group | None
) -> exp.Having | None:
    """HAVING may name a SELECT alias: Spark resolves a name first as a grouping column,
    and otherwise as an alias of the SELECT list, even one that shadows a table column
    (`SELECT count(*) AS a ... GROUP BY b HAVING a > 1`). Outside aggregate calls, such
    names are replaced here by the aliased expression."""
    aliases = {e.alias.lower(): e.this for e in selects if isinstance(e, exp.Alias)}
    if having is None or not aliases:
        return having
    keys = {k.sql() for k in grouping_sets(group)[0]} if group is not None else set()

    def swap(node: exp.Expression) -> exp.Expression:
        if (
            isinstance(node, exp.Column)
            and node.name.lower() in aliases
            and node.sql() not in keys
            and not any(is_aggregate_call(a) or isinstance(a, exp.Select) for a in _ancestors(node))
        ):  # not inside an aggregate call, nor inside a subquery's own scope
            return aliases[node.name.lower()].copy()
        return node

    out = having.transform(swap)
    assert isinstance(out, exp.Having)
    return out


def _ancestors(node: exp.Expression) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    parent = node.parent
    while isinstance(parent, exp.Expression):
        out.append(parent)
        parent = parent.parent
    return out


def _split_and(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _split_and(node.this) + _split_and(node.expression)
    return [node]


# id(node) -> (node, its table aliases): the join order asks of each conjunct once per
# candidate item and step, and a FROM of eight tables under thirty conjuncts asks
# thousands of times (the node is kept, so its id is not reused while the memo lives)
AliasMemo = dict[int, tuple[exp.Expression, frozenset[str]]]


def _aliases_of(node: exp.Expression, memo: AliasMemo | None = None) -> frozenset[str]:
    hit = memo.get(id(node)) if memo is not None else None
    if hit is not None:
        return hit[1]
    found = frozenset(c.table.lower() for c in node.find_all(exp.Column))
    if memo is not None:
        memo[id(node)] = (node, found)
    return found


def _equi_sides(
    c: exp.Expression, left: set[str], right: str, memo: AliasMemo | None = None
) -> tuple[exp.Expression, exp.Expression] | None:
    """(left side, right side) if `c` is an equality between the two join inputs."""
    if not isinstance(c, exp.EQ):
        return None
    a, b = _aliases_of(c.this, memo), _aliases_of(c.expression, memo)
    if a and b and a <= left and b == {right}:
        return c.this, c.expression
    if a and b and b <= left and a == {right}:
        return c.expression, c.this
    return None


def key_pairs(
    conjuncts: list[exp.Expression], left: set[str], right: str, memo: AliasMemo | None = None
) -> tuple[list[tuple[exp.Expression, exp.Expression, exp.Expression]], list[exp.Expression]]:
    """The equalities between the join inputs that become keys, as (conjunct, left side,
    right side), and the other conjuncts. A key expression already paired (`a.x = b.x AND
    a.x = b.y`) is not a key twice: that conjunct joins through the condition, as a trace
    keyed twice by one column is no index."""
    pairs: list[tuple[exp.Expression, exp.Expression, exp.Expression]] = []
    rest: list[exp.Expression] = []
    paired: tuple[set[str], set[str]] = (set(), set())
    for c in conjuncts:
        sides = _equi_sides(c, left, right, memo)
        if sides is None or sides[0].sql() in paired[0] or sides[1].sql() in paired[1]:
            rest.append(c)
            continue
        paired[0].add(sides[0].sql())
        paired[1].add(sides[1].sql())
        pairs.append((c, *sides))
    return pairs, rest


def _connects(conjuncts: list[exp.Expression], left: set[str], right: str, memo: AliasMemo) -> bool:
    """Whether some conjunct is an equality between the joined items and item `right`."""
    return any(_equi_sides(c, left, right, memo) is not None for c in conjuncts)


def _predicate(expr: Scalar, node: exp.Expression) -> Scalar:
    if expr.type.kind == "NULL":
        return coerce(expr, SqlType("BOOLEAN"))
    if expr.type.kind != "BOOLEAN":
        raise SqlError(f"a condition must be BOOLEAN, not {expr.type}", span_of(node))
    return expr


def _grouping_sets_union(
    pre: lp.Relation,
    n_group: int,
    sets: list[tuple[int, ...]],
    aggs: tuple[AggCall, ...],
    agg_fields: tuple[lp.Field, ...],
) -> lp.Relation:
    """UNION ALL of one aggregate per grouping set: keys outside the set are NULL, and a
    last column holds the set's grouping id (Spark's bit vector, first key highest)."""
    keys = pre.fields[:n_group]
    out_fields = (*keys, *agg_fields, lp.Field("grouping_id()", BIGINT))
    parts: list[lp.Relation] = []
    # An empty set groups everything into one row, yet none on empty input (Spark), unless
    # it is the only set: GROUPING SETS (()) is a global aggregate, one row even then.
    only_empty = sets == [()]
    for s in sets:
        agg = lp.Aggregate((*(keys[k] for k in s), *agg_fields), pre, tuple(s), aggs, is_global=only_empty)
        bits = sum(1 << (n_group - 1 - k) for k in range(n_group) if k not in s)
        exprs: list[Scalar] = [
            Col(keys[k].type, s.index(k)) if k in s else Lit(keys[k].type, None) for k in range(n_group)
        ]
        exprs += [Col(f.type, len(s) + j) for j, f in enumerate(agg_fields)]
        exprs.append(Lit(BIGINT, bits))
        parts.append(lp.Project(out_fields, agg, tuple(exprs)))
    return lp.UnionAll(out_fields, tuple(parts))


def _grouping_calls(bodies: list[exp.Expression], keys: list[exp.Expression], grouping_id: Scalar) -> dict[str, Scalar]:
    """GROUPING(k) and grouping_id(...) in SELECT and HAVING, as arithmetic on the id."""
    out: dict[str, Scalar] = {}
    positions = {k.sql(): i for i, k in enumerate(keys)}

    def bit(arg: exp.Expression) -> Scalar:
        i = positions.get(arg.sql())
        if i is None:
            raise SqlError(f"{arg.sql()} in GROUPING() is not a GROUP BY column", span_of(arg))
        shifted = Call(BIGINT, "int_div", (grouping_id, Lit(BIGINT, 1 << (len(keys) - 1 - i))))
        return Call(BIGINT, "mod", (shifted, Lit(BIGINT, 2)))

    for body in bodies:
        for node in body.find_all(exp.Grouping, exp.GroupingId):
            args = list(node.expressions) or ([node.this] if node.this is not None else [])
            if isinstance(node, exp.Grouping):
                if len(args) != 1:
                    raise SqlError("GROUPING takes one GROUP BY column", span_of(node))
                out[node.sql()] = Call(TINYINT, "cast", (bit(args[0]),))
            elif not args:
                out[node.sql()] = grouping_id
            else:
                total: Scalar = Lit(BIGINT, 0)
                for j, arg in enumerate(args):
                    weight = Lit(BIGINT, 1 << (len(args) - 1 - j))
                    total = Call(BIGINT, "add", (total, Call(BIGINT, "mul", (bit(arg), weight))))
                out[node.sql()] = total
    return out


def _bare_columns(nodes: list[exp.Expression], texts: set[str], kinds: set[type]) -> list[exp.Column]:
    """The distinct columns outside GROUP BY keys (printed as `texts`, of node classes
    `kinds`) and aggregate calls (SQLite's bare columns)."""
    found: dict[str, exp.Column] = {}
    # a node is printed only where a key of its class could equal it: printing every node
    # on the way down printed each subtree once per ancestor (5% of a sqllogictest run)

    def visit(n: exp.Expression) -> None:
        if (
            (type(n) in kinds and n.sql() in texts)
            or is_aggregate_call(n)
            or isinstance(n, (exp.Subquery, exp.Select, exp.Window))
        ):
            return
        if isinstance(n, exp.Column):
            found.setdefault(n.sql(), n)
            return
        for child in n.iter_expressions():
            visit(child)

    for n in nodes:
        visit(n)
    return list(found.values())


def _bare_aggregates(column: exp.Column) -> list[exp.Expression]:
    """What decides a bare column's value: its MIN and MAX, and whether NULLs are mixed in."""
    return [
        exp.Min(this=column.copy()),
        exp.Max(this=column.copy()),
        exp.Count(this=column.copy()),
        exp.Count(this=exp.Star()),
    ]


def _bare_value(column: exp.Column, replacements: dict[str, Scalar]) -> Scalar:
    """The group's one value of a bare column: SQLite takes it from an arbitrary row, so it is
    answered only when every row holds the same value (or all hold NULL), else a run-time
    error, never a guess. The check runs only where the value is used (CASE, COALESCE)."""
    low, high, count, rows = (replacements[a.sql()] for a in _bare_aggregates(column))
    varies = Call(
        BOOLEAN,
        "or",
        (
            Call(BOOLEAN, "ne", (low, high)),
            Call(
                BOOLEAN,
                "and",
                (Call(BOOLEAN, "ne", (count, Lit(BIGINT, 0))), Call(BOOLEAN, "ne", (count, rows))),
            ),
        ),
    )
    message = f"column '{column.name}' is neither grouped nor aggregated and differs within a group"
    return Call(low.type, "error_if", (varies, low, Lit(STRING, message)))


def _has_aggregate(node: exp.Expression) -> bool:
    return any(True for _ in _aggregate_calls([node]))


def _aggregate_calls(nodes: list[exp.Expression]) -> list[exp.Expression]:
    """Outermost aggregate calls (with their FILTER), in order, not looking into subqueries."""
    found: list[exp.Expression] = []

    def visit(n: exp.Expression) -> None:
        if is_aggregate_call(n):
            found.append(n)
            return
        if isinstance(n, (exp.Subquery, exp.Select)):
            return
        if isinstance(n, exp.Window):  # SUM(x) OVER (...) is not a GROUP BY aggregate; its inside may hold one
            for child in [*n.this.iter_expressions(), *(n.args.get("partition_by") or [])]:
                visit(child)
            if n.args.get("order") is not None:
                visit(n.args["order"])
            return
        for child in n.iter_expressions():
            visit(child)

    for n in nodes:
        visit(n)
    return found


def _output_name(item: exp.Expression, dialect: str) -> str:
    """A SELECT item's column name: its alias, lower-cased, or Spark's name for an
    unaliased item as compiler/frontend/spark_names.py spelt it (`CASE WHEN ...`)."""
    if not isinstance(item, exp.Alias):
        return item.sql(dialect)
    spelt = (item._meta or {}).get("spark_name")
    return spelt if isinstance(spelt, str) else item.alias_or_name.lower()

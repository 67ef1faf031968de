"""Outer joins, lowered onto the incremental primitives (join, distinct, map, filter, +, −).

    L LEFT JOIN R ON c  =  inner + pad(L − L ⋉ distinct(π_L inner)),   inner = σ_c(L ⋈ R)

`distinct(π_L inner)` is the set of left rows with at least one match; joining it back
to L null-safely on every column of L (a row with a NULL must find itself) gives each
matched left row with L's own multiplicity, so the bag difference leaves exactly the
unmatched rows, each as often as L holds it (tables are bags). Every operator used is
incremental (Thm 3.3, 3.4, Prop 4.7), so the outer join is maintained incrementally,
and a delete that removes the last match makes the padded row reappear.
RIGHT is LEFT with the sides swapped back; FULL adds both padded parts.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from sqlglot import exp

from dbspc.compiler.dialect import Semantics
from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_arrays import refuse_array
from dbspc.compiler.frontend.bind_scalar import ScalarScope, bind_scalar
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.type_rules import TypeMismatch, coerce, common_type
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar, conjunction
from dbspc.compiler.types import BOOLEAN, SqlType

Columns = dict[tuple[str, str], tuple[int, SqlType]]


def _zero(t: SqlType) -> Lit | None:
    """A non-NULL value of type `t`, to stand in for NULL in a null-safe key."""
    if t.is_integer:
        return Lit(t, 0)
    if t.is_float:
        return Lit(t, 0.0)
    if t.is_decimal:
        return Lit(t, Decimal(0))
    if t.is_array:
        return Lit(t, ())  # the empty ARRAY; NULL and [] stay apart by the IS NULL key beside it
    value = {
        "STRING": "",
        "BOOLEAN": False,
        "DATE": datetime.date(1970, 1, 1),
        "TIMESTAMP": datetime.datetime(1970, 1, 1),
        "TIMESTAMP_NTZ": datetime.datetime(1970, 1, 1),
    }.get(t.kind)
    return None if value is None else Lit(t, value)


def _null_safe_keys(rel: lp.Relation, idx: list[int]) -> tuple[lp.Relation, tuple[int, ...]]:
    """Append (c IS NULL, COALESCE(c, zero)) per key column: equal exactly when c <=> c'."""
    exprs: list[Scalar] = [Col(f.type, i) for i, f in enumerate(rel.fields)]
    keys: list[int] = []
    for i in idx:
        t = rel.fields[i].type
        keys.append(len(exprs))
        exprs.append(Call(BOOLEAN, "is_null", (Col(t, i),)))
        zero = _zero(t)
        if zero is not None:
            keys.append(len(exprs))
            exprs.append(Call(t, "coalesce", (Col(t, i), zero)))
    fields = rel.fields + tuple(lp.Field(f"nskey{k}", e.type) for k, e in enumerate(exprs[len(rel.fields) :]))
    return lp.Project(fields, rel, tuple(exprs)), tuple(keys)


def null_safe_join(left: lp.Relation, lidx: list[int], right: lp.Relation, ridx: list[int]) -> lp.Relation:
    """left ⋈ right on left[lidx] <=> right[ridx]; left's columns, then right's."""
    if not lidx:
        return lp.Join(left.fields + right.fields, left, right, (), ())
    lk_rel, lk = _null_safe_keys(left, lidx)
    rk_rel, rk = _null_safe_keys(right, ridx)
    joined = lp.Join(lk_rel.fields + rk_rel.fields, lk_rel, rk_rel, lk, rk)
    keep = list(range(len(left.fields))) + [len(lk_rel.fields) + i for i in range(len(right.fields))]
    fields = tuple(joined.fields[i] for i in keep)
    return lp.Project(fields, joined, tuple(Col(f.type, i) for f, i in zip(fields, keep, strict=True)))


def minus(left: lp.Relation, right: lp.Relation) -> lp.Relation:
    """Bag difference left − right, where right ⊆ left (a Z-set sum with a negation)."""
    return lp.Minus(left.fields, left, right)


def project_columns(rel: lp.Relation, cols: list[int]) -> lp.Relation:
    return lp.Project(tuple(rel.fields[i] for i in cols), rel, tuple(Col(rel.fields[i].type, i) for i in cols))


def unmatched(left: lp.Relation, matched_rows: lp.Relation) -> lp.Relation:
    """The rows of `left` (a bag) that are not in the set-projection of `matched_rows`,
    whose columns are left's: L − L ⋉ distinct(matched), null-safe on every column."""
    n = len(left.fields)
    matched = lp.Distinct(matched_rows.fields, matched_rows)
    semi = project_columns(null_safe_join(left, list(range(n)), matched, list(range(n))), list(range(n)))
    return minus(left, semi)


def unmatched_by_key(
    rel: lp.Relation, keys: tuple[int, ...], other: lp.Relation, other_keys: tuple[int, ...]
) -> lp.Relation:
    """With no condition beside the keys, a row of `rel` is matched exactly when `other`
    has its key: rel − rel ⋉ distinct(π_keys other). It reads only the keys of `rel`
    (so unread columns can be pruned, and rel's trace by its keys is the inner join's),
    and keeps the distinct keys of `other` instead of the distinct matched rows."""
    found = project_columns(other, list(other_keys))
    found = lp.Distinct(found.fields, found)
    semi = lp.Join(rel.fields + found.fields, rel, found, keys, tuple(range(len(other_keys))))
    return minus(rel, project_columns(semi, list(range(len(rel.fields)))))


def pad(rel: lp.Relation, before: tuple[lp.Field, ...], after: tuple[lp.Field, ...]) -> lp.Relation:
    """rel's columns with NULL columns of the given fields before and after them."""
    exprs: list[Scalar] = [Lit(f.type, None) for f in before]
    exprs += [Col(f.type, i) for i, f in enumerate(rel.fields)]
    exprs += [Lit(f.type, None) for f in after]
    return lp.Project(before + rel.fields + after, rel, tuple(exprs))


def outer_join(
    left: lp.Relation,
    right: lp.Relation,
    left_keys: tuple[int, ...],
    right_keys: tuple[int, ...],
    condition: Scalar | None,
    side: str,
) -> lp.Relation:
    """`left <side> JOIN right` on left_keys = right_keys AND condition (SQL `=`).

    `condition` reads the joined row (left's columns, then right's)."""
    fields = left.fields + right.fields
    nl, nr = len(left.fields), len(right.fields)
    inner: lp.Relation = lp.Join(fields, left, right, left_keys, right_keys)
    if condition is not None:
        inner = lp.Filter(fields, inner, condition)
    if side == "INNER":
        return inner
    parts: list[lp.Relation] = [inner]
    if side in ("LEFT", "FULL"):
        if condition is None:
            lost = unmatched_by_key(left, left_keys, right, right_keys)
        else:
            lost = unmatched(left, project_columns(inner, list(range(nl))))
        parts.append(pad(lost, (), right.fields))
    if side in ("RIGHT", "FULL"):
        if condition is None:
            lost = unmatched_by_key(right, right_keys, left, left_keys)
        else:
            lost = unmatched(right, project_columns(inner, list(range(nl, nl + nr))))
        parts.append(pad(lost, left.fields, ()))
    return lp.UnionAll(fields, tuple(parts))


def split_on(
    binder_semantics: Semantics,
    conjuncts: list[exp.Expression],
    left_cols: Columns,
    left_aliases: set[str],
    right_cols_local: Columns,
    right_alias: str,
    all_cols: Columns,
    left: lp.Relation,
    right: lp.Relation,
) -> tuple[lp.Relation, lp.Relation, tuple[int, ...], tuple[int, ...], Scalar | None, int, int]:
    """Equalities between the sides become join keys (computed into extra columns when
    they are expressions); the other conjuncts one condition over the joined row.

    Returns (left', right', left keys, right keys, condition, extra left cols, extra right cols)."""
    from dbspc.compiler.frontend.bind_query import _aliases_of, _predicate, _with_key_columns, key_pairs

    lkeys: list[Scalar] = []
    rkeys: list[Scalar] = []
    pairs, rest = key_pairs(conjuncts, left_aliases, right_alias)
    for c in rest:
        if not _aliases_of(c) <= left_aliases | {right_alias}:
            raise SqlError(f"cannot resolve '{c.sql(binder_semantics.dialect)}' in ON", span_of(c))
    for c, left_side, right_side in pairs:
        lk = bind_scalar(left_side, ScalarScope(left_cols, binder_semantics, context="ON"))
        rk = bind_scalar(right_side, ScalarScope(right_cols_local, binder_semantics, context="ON"))
        refuse_array(lk.type if lk.type.is_array else rk.type, "a join key", c)
        try:
            t = common_type(lk.type, rk.type, binder_semantics.string_number)
        except TypeMismatch as e:
            raise SqlError(f"{e} in join condition", span_of(c)) from None
        lkeys.append(coerce(lk, t))
        rkeys.append(coerce(rk, t))
    left2, lk_idx = _with_key_columns(left, lkeys)
    right2, rk_idx = _with_key_columns(right, rkeys)
    extra_l = len(left2.fields) - len(left.fields)
    condition: Scalar | None = None
    if rest:
        # the condition sees left2's columns then right2's: shift the right ones
        shifted = {k: (i + extra_l if i >= len(left.fields) else i, t) for k, (i, t) in all_cols.items()}
        scope = ScalarScope(shifted, binder_semantics, context="ON")
        condition = conjunction([_predicate(bind_scalar(c, scope), c) for c in rest])
    return left2, right2, lk_idx, rk_idx, condition, extra_l, len(right2.fields) - len(right.fields)


def join_two(
    semantics: Semantics,
    left: lp.Relation,
    left_cols: Columns,
    left_aliases: set[str],
    right: lp.Relation,
    right_local: Columns,
    right_alias: str,
    on: list[exp.Expression],
    side: str,
) -> tuple[lp.Relation, Columns]:
    """`left <side> JOIN right ON on`; the result keeps left's then right's column numbering."""
    offset = len(left.fields)
    right_cols = {k: (i + offset, t) for k, (i, t) in right_local.items()}
    all_cols = {**left_cols, **right_cols}
    left2, right2, lk, rk, cond, extra_l, extra_r = split_on(
        semantics, on, left_cols, left_aliases, right_local, right_alias, all_cols, left, right
    )
    joined = outer_join(left2, right2, lk, rk, cond, side)
    if extra_l or extra_r:
        keep = list(range(len(left.fields))) + [len(left2.fields) + i for i in range(len(right.fields))]
        joined = project_columns(joined, keep)
    return joined, all_cols


def join_side(join: exp.Join) -> str:
    """INNER, LEFT, RIGHT or FULL; refuses the others with a positioned error."""
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if kind in ("SEMI", "ANTI"):
        raise UnsupportedSql(
            f"{side} {kind} JOIN is not supported yet; use EXISTS or NOT EXISTS".strip(), span_of(join)
        )
    if join.args.get("using"):
        raise UnsupportedSql("JOIN ... USING is not supported; use ON", span_of(join))
    if side in ("LEFT", "RIGHT", "FULL"):
        return side
    if kind in ("", "INNER", "CROSS", "OUTER"):
        return "INNER"
    raise UnsupportedSql(f"{kind} JOIN is not supported", span_of(join))


def has_outer_join(sel: exp.Select) -> bool:
    return any(join_side(j) != "INNER" for j in sel.args.get("joins") or [])


_NULL_REJECTING = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_STRICT = (exp.Column, exp.Identifier, exp.Literal, exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg)


def _rejected_aliases(conjunct: exp.Expression) -> set[str]:
    """Aliases whose NULL columns make `conjunct` not true: a comparison of operands
    built only from columns, literals and arithmetic is NULL when any column is."""
    node = conjunct
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
        col = node.this.this
        return {col.table.lower()} if isinstance(col, exp.Column) else set()
    if not isinstance(node, _NULL_REJECTING):
        return set()
    out: set[str] = set()
    for side in (node.this, node.expression):
        if all(isinstance(n, _STRICT) for n in side.walk()):
            out |= {c.table.lower() for c in side.find_all(exp.Column)}
    return out


def bind_outer_from(
    semantics: Semantics, sel: exp.Select, items: list, where: list[exp.Expression]
) -> tuple[lp.Relation, Columns]:
    """FROM with outer joins, left-deep in FROM order; each ON applies at its own join,
    WHERE above all of them. A LEFT (RIGHT) join whose padded side the WHERE rejects
    NULLs of is an inner join (the padded rows could never pass)."""
    from dbspc.compiler.frontend.bind_query import _columns_of, _predicate, _split_and
    from dbspc.compiler.frontend.bind_subquery import has_subquery

    rejected: set[str] = set()
    for c in where:
        rejected |= _rejected_aliases(c)
    rel = items[0].relation
    cols = _columns_of(items[0])
    aliases = {items[0].alias}
    for item, join in zip(items[1:], sel.args.get("joins") or [], strict=True):
        if item.alias in aliases:
            raise SqlError(f"alias '{item.alias}' is used twice in FROM", span_of(join))
        side = join_side(join)
        keep_left = side in ("RIGHT", "FULL") and not (aliases & rejected)
        keep_right = side in ("LEFT", "FULL") and item.alias not in rejected
        side = {(True, True): "FULL", (True, False): "RIGHT", (False, True): "LEFT"}.get(
            (keep_left, keep_right), "INNER"
        )
        on = _split_and(join.args["on"]) if join.args.get("on") is not None else []
        on = [c for c in on if not has_subquery(c)]  # on_subqueries: they filter after FROM
        rel, cols = join_two(semantics, rel, cols, aliases, item.relation, _columns_of(item), item.alias, on, side)
        aliases = aliases | {item.alias}
    if where:
        scope = ScalarScope(cols, semantics, context="WHERE")
        rel = lp.Filter(rel.fields, rel, conjunction([_predicate(bind_scalar(c, scope), c) for c in where]))
    return rel, cols

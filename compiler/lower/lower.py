"""Lower the logical plan into a circuit of lifted operators (DBSP Table 1).

One function per logical node. The result is the non-incremental circuit ↑Q: each
source carries a table's contents and each output the view's contents.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit, body_order
from dbspc.compiler.errors import InternalCompilerError
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.logical.prune_columns import prune_columns
from dbspc.compiler.logical.scalar import Col, Lit, Scalar
from dbspc.compiler.types import FLOAT_KINDS, INT, INTEGER_KINDS


class Lowering:
    """Lowers into `circuit`. Inside a recursion scope, `parent` is the enclosing
    lowering: loop-invariant parts (no recursive reference) are lowered there and enter
    the scope as its inputs, so the loop body holds only what depends on the iterate."""

    def __init__(self, parent: Lowering | None = None, eager_operands: bool = False) -> None:
        self.circuit = Circuit()
        # the dialect's rule for a NULL operand's followers (Semantics.eager_operands)
        self.eager_operands: bool = parent.eager_operands if parent else eager_operands
        self.views: dict[str, int] = parent.views if parent else {}
        self.parent = parent
        self.scope_inputs: list[int] = []  # outer node of each ScopeInput

    def view(self, view: lp.View) -> int:
        node = self.relation(view.plan)
        self.views[view.name] = node
        return self.circuit.add(op.Output((node,), view.plan.types, view.name))

    def relation(self, rel: lp.Relation) -> int:
        if self.parent is not None and not reads_iterate(rel):
            outer = self.parent.relation(rel)
            if outer not in self.scope_inputs:
                self.scope_inputs.append(outer)
            return self.circuit.add(op.ScopeInput((), rel.types, self.scope_inputs.index(outer)))
        lower = _LOWERINGS.get(type(rel))
        if lower is None:
            raise InternalCompilerError(f"no lowering for {type(rel).__name__}")
        return lower(self, rel)


def reads_iterate(rel: lp.Relation) -> bool:
    """Whether a relation depends on the iterate of an enclosing recursion."""
    if isinstance(rel, lp.RecursiveRef):
        return True
    if isinstance(rel, lp.Fixpoint):
        return False  # a complete inner recursion is loop-invariant unless it says otherwise
    return any(reads_iterate(c) for c in lp.children(rel))


def lower_scan(ctx: Lowering, rel: lp.Scan) -> int:
    """A table is a source stream; an earlier view is that view's stream (shared)."""
    if rel.is_view:
        return ctx.views[rel.name]
    return ctx.circuit.add(op.Source((), rel.types, rel.name))


def lower_filter(ctx: Lowering, rel: lp.Filter) -> int:
    """WHERE p ↦ ↑σ_p (Table 1)."""
    return ctx.circuit.add(op.Filter((ctx.relation(rel.input),), rel.types, rel.predicate, ctx.eager_operands))


def lower_project(ctx: Lowering, rel: lp.Project) -> int:
    """SELECT f(...) ↦ ↑map(f) (Table 1); the identity projection is elided."""
    src = ctx.relation(rel.input)
    identity = tuple(Col(t, i) for i, t in enumerate(rel.input.types))
    if rel.exprs == identity:
        return src
    return ctx.circuit.add(op.Map((src,), rel.types, rel.exprs, ctx.eager_operands))


def lower_join(ctx: Lowering, rel: lp.Join) -> int:
    """JOIN ON a = b ↦ ↑⋈; FROM a, b ↦ × (a join with no keys)."""
    left, right = ctx.relation(rel.left), ctx.relation(rel.right)
    return ctx.circuit.add(op.Join((left, right), rel.types, rel.left_keys, rel.right_keys))


def lower_aggregate(ctx: Lowering, rel: lp.Aggregate) -> int:
    """GROUP BY + aggregates ↦ ↑Agg ∘ G_p (§7.3, §7.4).

    COUNT, SUM and AVG of DISTINCT x aggregate x's distinct values per group, the pairs

        ↑distinct ∘ ↑π(group.., x)

    without DISTINCT. Incrementally that is distinct's H (Prop 4.7), which meets only the
    (group, x) pairs a change touches, then the linear COUNT or SUM (§7.2), O(1) per
    touched group; kept in the aggregate, each touched group's whole value multiset
    would be read again at every change. When they are all the aggregates, with MIN or
    MAX of the same x, the pairs are the aggregate's input (`_distinct_values_of`).
    Beside others, each DISTINCT argument's pairs join the input rows in one Z-set
    (`_with_distinct_pairs`)."""
    src = ctx.relation(rel.input)
    arg = _distinct_values_of(rel)
    if arg is not None:
        values = _distinct_pairs(ctx, src, rel, arg)
        at = len(rel.group)
        aggs = tuple(dataclasses.replace(a, arg=at, distinct=False) for a in rel.aggs)
        return ctx.circuit.add(op.Aggregate((values,), rel.types, tuple(range(at)), aggs, rel.is_global))
    combined = _with_distinct_pairs(ctx, src, rel)
    if combined is not None:
        union, group, aggs = combined
        return ctx.circuit.add(op.Aggregate((union,), rel.types, group, aggs, rel.is_global))
    return ctx.circuit.add(op.Aggregate((src,), rel.types, rel.group, rel.aggs, rel.is_global))


# Kinds whose DISTINCT is their values' equality as bytes (floats are not: -0.0 and 0.0,
# and the NaNs, are one value to an aggregate's DISTINCT)
_EXACT_KINDS = ("DECIMAL", "STRING", "BOOLEAN", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", *INTEGER_KINDS)


def _counts_distinct(rel: lp.Aggregate, a: AggCall) -> bool:
    """COUNT, SUM or AVG of DISTINCT x, for x of an exact kind, or COUNT(DISTINCT x) of a
    float: -0.0 and 0.0, and the NaNs, are one value to the pairs' distinct as to Spark's
    DISTINCT, and a count does not read which of them the pairs kept (a sum would)."""
    if not a.distinct or a.fn not in ("count", "sum", "avg") or a.arg is None:
        return False
    kind = rel.input.types[a.arg].kind
    return kind in _EXACT_KINDS or (a.fn == "count" and kind in FLOAT_KINDS)


def _distinct_values_of(rel: lp.Aggregate) -> int | None:
    """The column x when every aggregate of `rel` is COUNT, SUM or AVG of DISTINCT x, or
    MIN or MAX of x, and at least one is the former: over x's distinct values per group
    they answer the same. None otherwise."""
    args = {a.arg for a in rel.aggs}
    if len(args) != 1 or not any(_counts_distinct(rel, a) for a in rel.aggs):
        return None
    arg = args.pop()
    assert arg is not None
    exact = rel.input.types[arg].kind in _EXACT_KINDS  # (MIN of a float reads the value kept)
    if all(_counts_distinct(rel, a) or (exact and a.fn in ("min", "max")) for a in rel.aggs):
        return arg
    return None


def _distinct_pairs(ctx: Lowering, src: int, rel: lp.Aggregate, arg: int) -> int:
    """distinct(π(group.., arg)) of the aggregate's input."""
    kept = (*rel.group, arg)
    types = tuple(rel.input.types[c] for c in kept)
    pairs = src
    if kept != tuple(range(len(rel.input.types))):
        pairs = ctx.circuit.add(op.Map((src,), types, tuple(Col(t, c) for t, c in zip(types, kept, strict=True))))
    return ctx.circuit.add(op.Distinct((pairs,), types))


def _with_distinct_pairs(
    ctx: Lowering, src: int, rel: lp.Aggregate
) -> tuple[int, tuple[int, ...], tuple[AggCall, ...]] | None:
    """Aggregates with COUNT, SUM or AVG of DISTINCT x beside others, over one Z-set: the
    input rows (group.., the other aggregates' arguments, a non-NULL tag that COUNT(*)
    counts, NULLs) plus, per such x, its distinct pairs (group.., NULLs, x in its own
    column). Every aggregate but COUNT(*) skips NULLs, so each reads its own rows, and a
    group has pairs only where it has rows. The union, its group columns and the
    aggregates over it; None when no aggregate is such (or one has no argument)."""
    counted = [a for a in rel.aggs if _counts_distinct(rel, a)]
    if not counted or any(a.arg is None and a.fn != "count_star" for a in rel.aggs):
        return None
    types = rel.input.types
    distinct_args = list(dict.fromkeys(a.arg for a in counted if a.arg is not None))
    other_args = list(dict.fromkeys(a.arg for a in rel.aggs if a.arg is not None and a not in counted))
    tagged = any(a.fn == "count_star" for a in rel.aggs)
    g = len(rel.group)
    # the union's columns: group.., other arguments.., [tag], one per DISTINCT argument
    layout = [types[c] for c in rel.group] + [types[c] for c in other_args] + ([INT] if tagged else [])
    tag_at = g + len(other_args)
    first_distinct = len(layout)
    layout += [types[c] for c in distinct_args]
    union_types = tuple(layout)

    def nulls(lo: int, hi: int) -> list[Scalar]:
        return [Lit(union_types[i], None) for i in range(lo, hi)]

    rows: list[Scalar] = [Col(types[c], c) for c in (*rel.group, *other_args)]
    rows += [Lit(INT, 1)] if tagged else []
    branches = [ctx.circuit.add(op.Map((src,), union_types, tuple(rows + nulls(first_distinct, len(layout)))))]
    for j, x in enumerate(distinct_args):
        at = first_distinct + j
        pairs = _distinct_pairs(ctx, src, rel, x)
        exprs = [Col(union_types[i], i) for i in range(g)] + nulls(g, at) + [Col(union_types[at], g)]
        exprs += nulls(at + 1, len(layout))
        branches.append(ctx.circuit.add(op.Map((pairs,), union_types, tuple(exprs))))
    union = ctx.circuit.add(op.Plus(tuple(branches), union_types))
    aggs = []
    for a in rel.aggs:
        if a.arg is None:  # COUNT(*)
            aggs.append(AggCall("count", tag_at, a.type))
        elif a in counted:
            aggs.append(dataclasses.replace(a, arg=first_distinct + distinct_args.index(a.arg), distinct=False))
        else:
            aggs.append(dataclasses.replace(a, arg=g + other_args.index(a.arg)))
    return union, tuple(range(g)), tuple(aggs)


def lower_window(ctx: Lowering, rel: lp.Window) -> int:
    """Window functions ↦ ↑window (its incremental form re-evaluates changed partitions)."""
    src = ctx.relation(rel.input)
    return ctx.circuit.add(op.Window((src,), rel.types, rel.partition, rel.order, rel.calls, rel.limit))


def lower_distinct(ctx: Lowering, rel: lp.Distinct) -> int:
    """SELECT DISTINCT ↦ ↑distinct."""
    return ctx.circuit.add(op.Distinct((ctx.relation(rel.input),), rel.types))


def lower_union_all(ctx: Lowering, rel: lp.UnionAll) -> int:
    """UNION ALL ↦ + (UNION adds a Distinct above, from the binder)."""
    inputs = tuple(ctx.relation(r) for r in rel.inputs)
    return ctx.circuit.add(op.Plus(inputs, rel.types))


def lower_values(ctx: Lowering, rel: lp.Values) -> int:
    """Constant rows ↦ a constant stream."""
    return ctx.circuit.add(op.Constant((), rel.types, rel.rows))


def _bag_difference(ctx: Lowering, rel: lp.Except | lp.Intersect) -> int:
    """relu(a − b): each row max(m − n, 0) times (EXCEPT ALL)."""
    a, b = ctx.relation(rel.left), ctx.relation(rel.right)
    diff = ctx.circuit.add(op.Plus((a, ctx.circuit.add(op.Negate((b,), rel.types))), rel.types))
    return ctx.circuit.add(op.PositivePart((diff,), rel.types))


def lower_except(ctx: Lowering, rel: lp.Except) -> int:
    """a EXCEPT b ↦ distinct(distinct(a) − distinct(b)).

    Table 1 writes distinct(a − b) for sets; SQL tables are bags, so both inputs are made
    sets first: a row in b must remove the row from a however often a holds it.
    EXCEPT ALL is the bag difference relu(a − b).
    """
    if rel.all:
        return _bag_difference(ctx, rel)
    a = ctx.circuit.add(op.Distinct((ctx.relation(rel.left),), rel.types))
    b = ctx.circuit.add(op.Distinct((ctx.relation(rel.right),), rel.types))
    neg = ctx.circuit.add(op.Negate((b,), rel.types))
    diff = ctx.circuit.add(op.Plus((a, neg), rel.types))
    return ctx.circuit.add(op.Distinct((diff,), rel.types))


def lower_minus(ctx: Lowering, rel: lp.Minus) -> int:
    """a − b ↦ a + (−b): linear, so incremental as it stands (Thm 3.3)."""
    a = ctx.relation(rel.left)
    neg = ctx.circuit.add(op.Negate((ctx.relation(rel.right),), rel.types))
    return ctx.circuit.add(op.Plus((a, neg), rel.types))


def lower_intersect(ctx: Lowering, rel: lp.Intersect) -> int:
    """a INTERSECT b ↦ da − distinct(da − db), with da, db the distinct inputs.

    For sets da ∩ db = da − (da ∖ db). Unlike Table 1's join on all columns this
    compares rows whole, so NULLs match NULLs as SQL set operations require.
    INTERSECT ALL is a − relu(a − b): min(m, n) copies of each row.
    """
    if rel.all:
        a = ctx.relation(rel.left)
        neg = ctx.circuit.add(op.Negate((_bag_difference(ctx, rel),), rel.types))
        return ctx.circuit.add(op.Plus((a, neg), rel.types))
    a = ctx.circuit.add(op.Distinct((ctx.relation(rel.left),), rel.types))
    b = ctx.circuit.add(op.Distinct((ctx.relation(rel.right),), rel.types))
    neg_b = ctx.circuit.add(op.Negate((b,), rel.types))
    a_minus_b = ctx.circuit.add(op.Distinct((ctx.circuit.add(op.Plus((a, neg_b), rel.types)),), rel.types))
    neg = ctx.circuit.add(op.Negate((a_minus_b,), rel.types))
    return ctx.circuit.add(op.Plus((a, neg), rel.types))


def lower_recursive_ref(ctx: Lowering, rel: lp.RecursiveRef) -> int:
    """A recursive reference reads the previous iterate: z⁻¹ on the feedback edge."""
    if ctx.parent is None:
        raise InternalCompilerError(f"recursive reference to '{rel.name}' outside its scope")
    return ctx.circuit.add(op.Feedback((), rel.types, rel.index))


def lower_fixpoint(ctx: Lowering, rel: lp.Fixpoint) -> int:
    """WITH RECURSIVE ↦ a nested scope (§5.1): inputs enter through δ0, the iterate
    feeds back through z⁻¹, and the scope's value is the fixpoint (∫ at the exit)."""
    inner = Lowering(parent=ctx)
    results = tuple(inner.relation(body) for body in rel.bodies)
    body = close_feedback(inner.circuit, results)
    scope = ctx.circuit.add(op.Scope(tuple(inner.scope_inputs), (), body, results, rel.names, rel.max_level))
    return ctx.circuit.add(op.ScopeOutput((scope,), rel.types, rel.output, rel.names[rel.output]))


def close_feedback(inner: Circuit, results: tuple[int, ...]) -> tuple[op.Operator, ...]:
    """Replace each Feedback placeholder by z⁻¹ of its CTE's result node."""
    body: list[op.Operator] = []
    for o in inner.nodes:
        if isinstance(o, op.Feedback):
            body.append(op.Delay((results[o.index],), o.types))
        else:
            body.append(o)
    body_order(tuple(body))  # every cycle passes through z⁻¹ (Cor 2.12)
    return tuple(body)


_LOWERINGS: dict[type, Callable[..., int]] = {
    lp.RecursiveRef: lower_recursive_ref,
    lp.Fixpoint: lower_fixpoint,
    lp.Scan: lower_scan,
    lp.Filter: lower_filter,
    lp.Project: lower_project,
    lp.Join: lower_join,
    lp.Aggregate: lower_aggregate,
    lp.Distinct: lower_distinct,
    lp.Window: lower_window,
    lp.UnionAll: lower_union_all,
    lp.Values: lower_values,
    lp.Except: lower_except,
    lp.Intersect: lower_intersect,
    lp.Minus: lower_minus,
}


def lower_views(views: list[lp.View], eager_operands: bool = False) -> Circuit:
    """One circuit for all views of a program, so views share their common parts."""
    ctx = Lowering(eager_operands=eager_operands)
    for v, plan in zip(views, prune_columns([v.plan for v in views]), strict=True):
        ctx.view(lp.View(v.name, plan, v.write_sql))
    return ctx.circuit

"""Lower the logical plan into a circuit of lifted operators (DBSP Table 1).

One function per logical node. The result is the non-incremental circuit ↑Q: each
source carries a table's contents and each output the view's contents.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.circuit import operators as op
from compiler.circuit.circuit import Circuit
from compiler.errors import InternalCompilerError
from compiler.logical import plan as lp
from compiler.logical.scalar import Col


class Lowering:
    def __init__(self, program_tables: dict[str, lp.Relation | None]) -> None:
        self.circuit = Circuit()
        self.views: dict[str, int] = {}
        self._tables = program_tables

    def view(self, view: lp.View) -> int:
        node = self.relation(view.plan)
        self.views[view.name] = node
        return self.circuit.add(op.Output((node,), view.plan.types, view.name))

    def relation(self, rel: lp.Relation) -> int:
        lower = _LOWERINGS.get(type(rel))
        if lower is None:
            raise InternalCompilerError(f"no lowering for {type(rel).__name__}")
        return lower(self, rel)


def lower_scan(ctx: Lowering, rel: lp.Scan) -> int:
    """A table is a source stream; an earlier view is that view's stream (shared)."""
    if rel.is_view:
        return ctx.views[rel.name]
    return ctx.circuit.add(op.Source((), rel.types, rel.name))


def lower_filter(ctx: Lowering, rel: lp.Filter) -> int:
    """WHERE p ↦ ↑σ_p (Table 1)."""
    return ctx.circuit.add(op.Filter((ctx.relation(rel.input),), rel.types, rel.predicate))


def lower_project(ctx: Lowering, rel: lp.Project) -> int:
    """SELECT f(...) ↦ ↑map(f) (Table 1); the identity projection is elided."""
    src = ctx.relation(rel.input)
    identity = tuple(Col(t, i) for i, t in enumerate(rel.input.types))
    if rel.exprs == identity:
        return src
    return ctx.circuit.add(op.Map((src,), rel.types, rel.exprs))


def lower_join(ctx: Lowering, rel: lp.Join) -> int:
    """JOIN ON a = b ↦ ↑⋈; FROM a, b ↦ × (a join with no keys)."""
    left, right = ctx.relation(rel.left), ctx.relation(rel.right)
    return ctx.circuit.add(op.Join((left, right), rel.types, rel.left_keys, rel.right_keys))


def lower_aggregate(ctx: Lowering, rel: lp.Aggregate) -> int:
    """GROUP BY + aggregates ↦ ↑Agg ∘ G_p (§7.3, §7.4)."""
    src = ctx.relation(rel.input)
    return ctx.circuit.add(op.Aggregate((src,), rel.types, rel.group, rel.aggs, rel.is_global))


def lower_distinct(ctx: Lowering, rel: lp.Distinct) -> int:
    """SELECT DISTINCT ↦ ↑distinct."""
    return ctx.circuit.add(op.Distinct((ctx.relation(rel.input),), rel.types))


def lower_union_all(ctx: Lowering, rel: lp.UnionAll) -> int:
    """UNION ALL ↦ + (UNION adds a Distinct above, from the binder)."""
    inputs = tuple(ctx.relation(r) for r in rel.inputs)
    return ctx.circuit.add(op.Plus(inputs, rel.types))


def lower_except(ctx: Lowering, rel: lp.Except) -> int:
    """a EXCEPT b ↦ distinct(distinct(a) − distinct(b)).

    Table 1 writes distinct(a − b) for sets; SQL tables are bags, so both inputs are made
    sets first: a row in b must remove the row from a however often a holds it.
    """
    a = ctx.circuit.add(op.Distinct((ctx.relation(rel.left),), rel.types))
    b = ctx.circuit.add(op.Distinct((ctx.relation(rel.right),), rel.types))
    neg = ctx.circuit.add(op.Negate((b,), rel.types))
    diff = ctx.circuit.add(op.Plus((a, neg), rel.types))
    return ctx.circuit.add(op.Distinct((diff,), rel.types))


def lower_intersect(ctx: Lowering, rel: lp.Intersect) -> int:
    """a INTERSECT b ↦ da − distinct(da − db), with da, db the distinct inputs.

    For sets da ∩ db = da − (da ∖ db). Unlike Table 1's join on all columns this
    compares rows whole, so NULLs match NULLs as SQL set operations require.
    """
    a = ctx.circuit.add(op.Distinct((ctx.relation(rel.left),), rel.types))
    b = ctx.circuit.add(op.Distinct((ctx.relation(rel.right),), rel.types))
    neg_b = ctx.circuit.add(op.Negate((b,), rel.types))
    a_minus_b = ctx.circuit.add(op.Distinct((ctx.circuit.add(op.Plus((a, neg_b), rel.types)),), rel.types))
    neg = ctx.circuit.add(op.Negate((a_minus_b,), rel.types))
    return ctx.circuit.add(op.Plus((a, neg), rel.types))


_LOWERINGS: dict[type, Callable[..., int]] = {
    lp.Scan: lower_scan,
    lp.Filter: lower_filter,
    lp.Project: lower_project,
    lp.Join: lower_join,
    lp.Aggregate: lower_aggregate,
    lp.Distinct: lower_distinct,
    lp.UnionAll: lower_union_all,
    lp.Except: lower_except,
    lp.Intersect: lower_intersect,
}


def lower_views(views: list[lp.View]) -> Circuit:
    """One circuit for all views of a program, so views share their common parts."""
    ctx = Lowering({})
    for v in views:
        ctx.view(v)
    return ctx.circuit

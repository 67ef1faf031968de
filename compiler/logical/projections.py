"""Projections that only rename or cast the columns of a relation.

A CTE or view with a column list, the arms of a set operation and the arms of a
recursive CTE all need one of these; they are built here so that every such projection
has the same shape in the plan (and in circuit dumps).
"""

from __future__ import annotations

from collections.abc import Sequence

from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Call, Col, Scalar
from dbspc.compiler.types import SqlType


def renamed(rel: lp.Relation, names: Sequence[str]) -> lp.Relation:
    """`rel` with its columns called `names` (always a projection, even if unchanged)."""
    fields = tuple(lp.Field(n, f.type) for n, f in zip(names, rel.fields, strict=True))
    return lp.Project(fields, rel, tuple(Col(f.type, i) for i, f in enumerate(rel.fields)))


def cast_to(rel: lp.Relation, types: Sequence[SqlType]) -> lp.Relation:
    """`rel` with its columns cast to `types`; `rel` itself when they already have them.

    The binder chose `types` as common types (type_rules.common_type), so each cast is
    one the runtime supports."""
    if list(rel.types) == list(types):
        return rel
    exprs: tuple[Scalar, ...] = tuple(
        Col(f.type, i) if f.type == t else Call(t, "cast", (Col(f.type, i),))
        for i, (f, t) in enumerate(zip(rel.fields, types, strict=True))
    )
    fields = tuple(lp.Field(f.name, t) for f, t in zip(rel.fields, types, strict=True))
    return lp.Project(fields, rel, exprs)

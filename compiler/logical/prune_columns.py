"""Column pruning: compute only the columns that some reader uses.

Spark's optimizer drops the columns of a derived table, a CTE or a UNION arm that
nothing above reads (its ColumnPruning rule), so an expression in such a column is
never evaluated: over a string 'a',

    SELECT c0 FROM (SELECT k AS c0, CAST(s AS INT) AS c1 FROM t) x

answers in Spark, where computing `c1` would fail with CAST_INVALID_INPUT. Pruning here
gives the same answers, and it narrows what the operators above carry and keep (a join
over a derived table indexes only the columns read above it).

The views of a program share equal parts of their plans (the circuit adds an operator
once), so pruning is done for all views together, in two passes: the first gives each
distinct node the union of what all its readers read, parents before children; the
second prunes each node once to that union, so parts equal before stay equal.

Tables (and earlier views) are read whole: their integrals are shared with the checks on
deletes. Nodes whose meaning depends on every column (DISTINCT, EXCEPT, INTERSECT, a
window, which breaks ties by all columns) read all of their input; aggregates keep all
of their calls, and recursive scopes are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.scalar import Col, Scalar, columns_used, remap_columns

Need = frozenset[int]  # the output columns of a node that its readers read
Pruned = tuple[lp.Relation, dict[int, int]]  # the new node, and where each read column went


def prune_columns(plans: Sequence[lp.Relation]) -> list[lp.Relation]:
    """The views' plans (every output column read) without the inner columns no one reads."""
    same = _Canonical()
    needs = _needs(plans, same)
    done: dict[int, Pruned] = {}
    return [_pruned(p, needs, done, same)[0] for p in plans]


class _Canonical:
    """One number per distinct plan, equal for equal plans. Plans share subplans, and a
    dataclass hash walks the whole tree below a node each time, so keying dicts by the
    nodes themselves costs exponential time in the depth of sharing; this numbers each
    node object once, from its own fields and its inputs' numbers."""

    def __init__(self) -> None:
        self._by_object: dict[int, tuple[int, lp.Relation]] = {}  # id -> (number, node kept alive)
        self._by_shape: dict[tuple[object, ...], int] = {}

    def __call__(self, rel: lp.Relation) -> int:
        seen = self._by_object.get(id(rel))
        if seen is not None:
            return seen[0]
        shape: list[object] = [type(rel)]
        for f in dataclasses.fields(rel):
            value = getattr(rel, f.name)
            if isinstance(value, lp.Relation):
                value = ("rel", self(value))
            elif isinstance(value, tuple) and value and all(isinstance(v, lp.Relation) for v in value):
                value = ("rels", tuple(self(v) for v in value))
            shape.append(value)
        number = self._by_shape.setdefault(tuple(shape), len(self._by_shape))
        self._by_object[id(rel)] = (number, rel)
        return number


# -- pass 1: what each node's readers read ------------------------------------------------


def _needs(plans: Sequence[lp.Relation], same: _Canonical) -> dict[int, Need]:
    order: list[lp.Relation] = []  # post-order over distinct nodes
    seen: set[int] = set()
    stack: list[tuple[lp.Relation, bool]] = [(p, False) for p in reversed(plans)]
    while stack:  # iterative: plans nest deeper than Python's recursion allows
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if same(node) in seen:
            continue
        seen.add(same(node))
        stack.append((node, True))
        stack.extend((c, False) for c in _inputs(node))
    needs: dict[int, Need] = {same(p): _all(p) for p in plans}
    for node in reversed(order):  # every reader of a node comes before it
        rule = _READS.get(type(node))
        if rule is None:
            continue
        for child, need in rule(node, needs.get(same(node), frozenset())):
            needs[same(child)] = needs.get(same(child), frozenset()) | need
    return needs


def _inputs(rel: lp.Relation) -> list[lp.Relation]:
    return lp.children(rel) if type(rel) in _READS else []


def _in_place(rel: lp.Relation) -> dict[int, int]:
    """Every column of `rel` where it was: what nodes left as they are map."""
    return {i: i for i in range(len(rel.fields))}


def _all(rel: lp.Relation) -> Need:
    return frozenset(range(len(rel.fields)))


def _used(exprs: Iterable[Scalar]) -> Need:
    out: Need = frozenset()
    for e in exprs:
        out |= columns_used(e)
    return out


def _project_reads(rel: lp.Project, need: Need) -> list[tuple[lp.Relation, Need]]:
    return [(rel.input, _used(rel.exprs[i] for i in need))]


def _filter_reads(rel: lp.Filter, need: Need) -> list[tuple[lp.Relation, Need]]:
    return [(rel.input, need | columns_used(rel.predicate))]


def _join_reads(rel: lp.Join, need: Need) -> list[tuple[lp.Relation, Need]]:
    width = len(rel.left.fields)
    left = frozenset(i for i in need if i < width) | frozenset(rel.left_keys)
    right = frozenset(i - width for i in need if i >= width) | frozenset(rel.right_keys)
    return [(rel.left, left), (rel.right, right)]


def _aggregate_reads(rel: lp.Aggregate, need: Need) -> list[tuple[lp.Relation, Need]]:
    return [(rel.input, frozenset(rel.group) | frozenset(a.arg for a in rel.aggs if a.arg is not None))]


def _same_reads(rel: lp.UnionAll | lp.Minus, need: Need) -> list[tuple[lp.Relation, Need]]:
    return [(c, need) for c in lp.children(rel)]


def _whole_reads(rel: lp.Relation, need: Need) -> list[tuple[lp.Relation, Need]]:
    return [(c, _all(c)) for c in lp.children(rel)]


_READS: dict[type[lp.Relation], Callable[..., list[tuple[lp.Relation, Need]]]] = {
    lp.Project: _project_reads,
    lp.Filter: _filter_reads,
    lp.Join: _join_reads,
    lp.Aggregate: _aggregate_reads,
    lp.UnionAll: _same_reads,
    lp.Minus: _same_reads,
    lp.Distinct: _whole_reads,
    lp.Window: _whole_reads,
    lp.Except: _whole_reads,
    lp.Intersect: _whole_reads,
}


# -- pass 2: each node pruned once, to what all its readers read ---------------------------


def _pruned(rel: lp.Relation, needs: dict[int, Need], done: dict[int, Pruned], same: _Canonical) -> Pruned:
    key = same(rel)
    out = done.get(key)
    if out is None:
        rule = _PRUNE.get(type(rel))
        if rule is None:  # tables, VALUES, recursive scopes: as they are
            out = rel, _in_place(rel)
        else:
            out = rule(rel, sorted(needs.get(key, frozenset())), lambda c: _pruned(c, needs, done, same))
        done[key] = out
    return out


Prune = Callable[[lp.Relation], Pruned]


def _project(rel: lp.Project, keep: list[int], prune: Prune) -> Pruned:
    child, at = prune(rel.input)
    exprs = tuple(remap_columns(rel.exprs[i], at) for i in keep)
    return lp.Project(tuple(rel.fields[i] for i in keep), child, exprs), {i: j for j, i in enumerate(keep)}


def _filter(rel: lp.Filter, keep: list[int], prune: Prune) -> Pruned:
    child, at = prune(rel.input)
    return lp.Filter(child.fields, child, remap_columns(rel.predicate, at)), at


def _join(rel: lp.Join, keep: list[int], prune: Prune) -> Pruned:
    (left, lat), (right, rat) = prune(rel.left), prune(rel.right)
    joined = lp.Join(
        left.fields + right.fields,
        left,
        right,
        tuple(lat[k] for k in rel.left_keys),
        tuple(rat[k] for k in rel.right_keys),
    )
    width = len(rel.left.fields)
    return joined, {**lat, **{width + i: len(left.fields) + j for i, j in rat.items()}}


def _aggregate(rel: lp.Aggregate, keep: list[int], prune: Prune) -> Pruned:
    child, at = prune(rel.input)
    aggs = tuple(a if a.arg is None else dataclasses.replace(a, arg=at[a.arg]) for a in rel.aggs)
    pruned = dataclasses.replace(rel, input=child, group=tuple(at[g] for g in rel.group), aggs=aggs)
    return pruned, _in_place(rel)


def _exactly(rel: lp.Relation, keep: list[int], prune: Prune) -> lp.Relation:
    """`rel` pruned to the columns `keep`, in that order and nothing else: the arms of
    a UNION ALL or a bag difference must agree column by column."""
    child, at = prune(rel)
    cols = [at[i] for i in keep]
    if cols == list(range(len(child.fields))):
        return child
    return lp.Project(tuple(child.fields[j] for j in cols), child, tuple(Col(child.fields[j].type, j) for j in cols))


def _union_all(rel: lp.UnionAll, keep: list[int], prune: Prune) -> Pruned:
    arms = tuple(_exactly(arm, keep, prune) for arm in rel.inputs)
    return lp.UnionAll(tuple(rel.fields[i] for i in keep), arms), {i: j for j, i in enumerate(keep)}


def _minus(rel: lp.Minus, keep: list[int], prune: Prune) -> Pruned:
    """left − right with right a sub-bag of left: a projection of both is one still."""
    left, right = (_exactly(side, keep, prune) for side in (rel.left, rel.right))
    return lp.Minus(tuple(rel.fields[i] for i in keep), left, right), {i: j for j, i in enumerate(keep)}


def _whole_input(rel: lp.Distinct | lp.Window, keep: list[int], prune: Prune) -> Pruned:
    return dataclasses.replace(rel, input=prune(rel.input)[0]), _in_place(rel)


def _whole_sides(rel: lp.Except | lp.Intersect, keep: list[int], prune: Prune) -> Pruned:
    pruned = dataclasses.replace(rel, left=prune(rel.left)[0], right=prune(rel.right)[0])
    return pruned, _in_place(rel)


_PRUNE: dict[type[lp.Relation], Callable[..., Pruned]] = {
    lp.Project: _project,
    lp.Filter: _filter,
    lp.Join: _join,
    lp.Aggregate: _aggregate,
    lp.UnionAll: _union_all,
    lp.Minus: _minus,
    lp.Distinct: _whole_input,
    lp.Window: _whole_input,
    lp.Except: _whole_sides,
    lp.Intersect: _whole_sides,
}

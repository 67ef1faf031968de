"""Joins: batch semantics, and the bilinear rule (Thm 3.4) over traces."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.types import BIGINT, DOUBLE, INT, STRING, SqlType
from dbspc.runtime.kernels.join import join, join_with_trace
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

A_TYPES: list[SqlType] = [INT, STRING]
B_TYPES: list[SqlType] = [STRING, INT, DOUBLE]
OUT = [*A_TYPES, *B_TYPES]


def test_inner_join_nulls_never_match_and_weights_multiply() -> None:
    a = ZSet.from_rows([(1, "x"), (None, "y"), (2, "z")], A_TYPES, [2, 1, 1])
    b = ZSet.from_rows([("p", 1, 0.5), ("q", None, 1.0), ("r", 1, 2.0)], B_TYPES, [3, 1, -1])
    out = join(a, b, [0], [1], OUT)
    assert out.to_rows() == [((1, "x", "p", 1, 0.5), 6), ((1, "x", "r", 1, 2.0), -2)]


def test_multi_key_and_different_int_widths() -> None:
    a = ZSet.from_rows([(1, "x"), (1, "y")], A_TYPES)
    b = ZSet.from_rows([(1, "x", 7)], [BIGINT, STRING, BIGINT])
    out = join(a, b, [0, 1], [0, 1], [*A_TYPES, BIGINT, STRING, BIGINT])
    assert out.to_rows() == [((1, "x", 1, "x", 7), 1)]


def test_cross_product() -> None:
    a = ZSet.from_rows([(1, "x"), (2, None)], A_TYPES)
    b = ZSet.from_rows([("p", None, 1.0)], B_TYPES, [2])
    out = join(a, b, [], [], OUT)
    assert out.to_rows() == [((1, "x", "p", None, 1.0), 2), ((2, None, "p", None, 1.0), 2)]


def test_join_with_trace_both_sides() -> None:
    tb = Trace(B_TYPES, (1,))
    tb.insert(ZSet.from_rows([("p", 1, 0.5), ("n", None, 0.0)], B_TYPES))
    da = ZSet.from_rows([(1, "x"), (None, "y")], A_TYPES, [-1, 1])
    assert join_with_trace(da, [0], tb, True, OUT).to_rows() == [((1, "x", "p", 1, 0.5), -1)]

    ta = Trace(A_TYPES, (0,))
    ta.insert(ZSet.from_rows([(1, "x"), (None, "y")], A_TYPES))
    db = ZSet.from_rows([("p", 1, 0.5), ("n", None, 0.0)], B_TYPES, [2, 1])
    assert join_with_trace(db, [1], ta, False, OUT).to_rows() == [((1, "x", "p", 1, 0.5), 2)]


def test_join_with_trace_cross() -> None:
    tb = Trace(B_TYPES, ())
    tb.insert(ZSet.from_rows([("p", 1, 0.5), ("q", 2, 1.5)], B_TYPES))
    da = ZSet.from_rows([(9, "x")], A_TYPES, [3])
    out = join_with_trace(da, [], tb, True, OUT)
    assert out.to_rows() == [((9, "x", "p", 1, 0.5), 3), ((9, "x", "q", 2, 1.5), 3)]


a_row = st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.sampled_from(["x", "y"]))
b_row = st.tuples(st.sampled_from(["p", "q"]), st.one_of(st.none(), st.integers(0, 3)), st.sampled_from([0.5, 1.0]))
weights = st.integers(-2, 2).filter(bool)


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.lists(st.tuples(a_row, weights), max_size=5),
            st.lists(st.tuples(b_row, weights), max_size=5),
        ),
        min_size=1,
        max_size=5,
    ),
    cross=st.booleans(),
    collide=st.booleans(),
)
def test_incremental_join_equals_join_of_integrals(
    steps: list[tuple[list[tuple[Any, int]], list[tuple[Any, int]]]], cross: bool, collide: bool
) -> None:
    """Δ(a⋈b) = Δa⋈z⁻¹(I b) + z⁻¹(I a)⋈Δb + Δa⋈Δb, integrated, equals I(a)⋈I(b); also
    when 2-valued hashes make different keys collide in the traces."""
    with colliding_hashes(2 if collide else None):
        _check_incremental_join(steps, cross)


def _check_incremental_join(steps: list[tuple[list[tuple[Any, int]], list[tuple[Any, int]]]], cross: bool) -> None:
    a_keys, b_keys = ([], []) if cross else ([0], [1])
    ta, tb = Trace(A_TYPES, tuple(a_keys)), Trace(B_TYPES, tuple(b_keys))
    total = ZSet.empty(OUT)
    for da_rows, db_rows in steps:
        da = ZSet.from_rows([r for r, _ in da_rows], A_TYPES, [w for _, w in da_rows])
        db = ZSet.from_rows([r for r, _ in db_rows], B_TYPES, [w for _, w in db_rows])
        d_out = ZSet.concat(
            [
                join_with_trace(da, a_keys, tb, True, OUT),
                join_with_trace(db, b_keys, ta, False, OUT),
                join(da, db, a_keys, b_keys, OUT),
            ],
            OUT,
        )
        ta.insert(da)
        tb.insert(db)
        total = ZSet.concat([total, d_out], OUT).consolidate()
        expected = join(ta.snapshot(), tb.snapshot(), a_keys, b_keys, OUT)
        assert total.to_rows() == expected.to_rows()


@settings(max_examples=60, deadline=None)
@given(
    a_rows=st.lists(st.tuples(a_row, weights), max_size=8),
    b_rows=st.lists(st.tuples(b_row, weights), max_size=8),
    consolidated=st.booleans(),
    collide=st.sampled_from([None, 2, 1]),
    cross=st.booleans(),
)
def test_batch_join_by_key_hashes_equals_pairs(
    a_rows: list[tuple[Any, int]],
    b_rows: list[tuple[Any, int]],
    consolidated: bool,
    collide: int | None,
    cross: bool,
) -> None:
    """Two batches join by key hashes (a sort and binary searches, not a polars join):
    every pair with equal non-NULL keys, weights multiplied; with colliding hashes the
    polars join takes over. Without keys (`cross`), every pair, NULLs too, in numpy.
    The output is consolidated (as it is, for consolidated inputs)."""
    a = ZSet.from_rows([r for r, _ in a_rows], A_TYPES, [w for _, w in a_rows])
    b = ZSet.from_rows([r for r, _ in b_rows], B_TYPES, [w for _, w in b_rows])
    if consolidated:
        a, b = a.consolidate(), b.consolidate()
    want: dict[tuple[Any, ...], int] = {}
    for ra, wa in a.to_rows():
        for rb, wb in b.to_rows():
            if cross or (ra[0] is not None and ra[0] == rb[1]):
                want[(*ra, *rb)] = want.get((*ra, *rb), 0) + wa * wb
    with colliding_hashes(collide):
        out = join(a, b, [] if cross else [0], [] if cross else [1], OUT)
    assert dict(out.to_rows()) == {r: w for r, w in want.items() if w}
    assert len(out) == len(out.to_rows())  # each row once


def test_join_read_only_by_summing_operators_leaves_equal_rows_to_them() -> None:
    """An incremental join's Δ⋈I terms feed a sum, which consolidates: the executor marks
    them loose, and the join leaves equal rows apart (a trace of two runs holds a row
    twice); the view's output is still the consolidated join."""
    from dbspc.compiler.circuit import operators as op
    from dbspc.runtime.pipeline import Pipeline

    p = Pipeline.from_sql(
        "CREATE TABLE a (k INT, v INT); CREATE TABLE b (k INT, w INT);"
        "CREATE VIEW j AS SELECT a.v, b.w FROM a JOIN b ON a.k = b.k;"
    )
    ex = p.executor
    joins = [n for n in ex.order if isinstance(ex.circuit[n], op.Join)]
    assert joins and set(joins) <= ex.loose
    a_types, b_types = p.table_types("a"), p.table_types("b")
    p.step({"a": ZSet.from_rows([(1, 10)], a_types), "b": ZSet.from_rows([(1, 5)], b_types)})
    p.step({"a": ZSet.from_rows([(1, 10)], a_types, [-1])})  # b's trace: one run; a's: two
    p.step({"a": ZSet.from_rows([(1, 10)], a_types)})
    out = p.step({"b": ZSet.from_rows([(1, 5), (1, 6)], b_types, [1, 1])})["j"]
    assert out.to_rows() == [((10, 5), 1), ((10, 6), 1)]


def test_a_sum_read_through_a_projection_alone_leaves_equal_rows_to_the_output() -> None:
    """The join's terms meet in a sum that only a projection reads, and the view's output
    sums equal rows: the sum is loose too (runtime/executor.py passes_rows_on). Behind an
    expression it is not: a deleted row of a and an inserted row of b pair in two terms
    that cancel, and x / y must not be evaluated on a pair the view never holds (here
    it would raise a division by zero)."""
    from dbspc.compiler.circuit import operators as op
    from dbspc.runtime.pipeline import Pipeline

    tables = "CREATE TABLE a (k INT, x INT); CREATE TABLE b (k INT, y INT);"
    projected = Pipeline.from_sql(tables + "CREATE VIEW j AS SELECT a.x, b.y FROM a JOIN b ON a.k = b.k;")
    divided = Pipeline.from_sql(tables + "CREATE VIEW j AS SELECT a.x / b.y AS q FROM a JOIN b ON a.k = b.k;")
    for p, loose in [(projected, True), (divided, False)]:
        ex = p.executor
        sums = [n for n in ex.order if isinstance(ex.circuit[n], op.Plus)]
        assert sums and all((n in ex.loose) == loose for n in sums)
        a_types, b_types = p.table_types("a"), p.table_types("b")
        p.step({"a": ZSet.from_rows([(1, 6)], a_types)})
        out = p.step({"a": ZSet.from_rows([(1, 6)], a_types, [-1]), "b": ZSet.from_rows([(1, 0)], b_types)})["j"]
        assert out.to_rows() == []
        out = p.step({"a": ZSet.from_rows([(1, 6)], a_types), "b": ZSet.from_rows([(1, 0), (1, 3)], b_types, [-1, 1])})
        assert out["j"].to_rows() == [((6, 3) if loose else (2.0,), 1)]


def test_join_with_trace_unconsolidated_keeps_a_row_of_two_runs_twice() -> None:
    trace = Trace(tuple(B_TYPES), (1,))
    trace.insert(ZSet.from_rows([("p", 1, 0.5), *((f"o{i}", 9, 0.0) for i in range(5))], B_TYPES))
    trace.insert(ZSet.from_rows([("p", 1, 0.5)], B_TYPES))  # the same row, a run 6x smaller: not merged
    assert trace.run_count == 2
    delta = ZSet.from_rows([(1, "x")], A_TYPES)
    loose = join_with_trace(delta, [0], trace, True, OUT, consolidate=False)
    assert len(loose) == 2 and not loose.consolidated
    assert loose.consolidate().to_rows() == join_with_trace(delta, [0], trace, True, OUT).to_rows()
    assert join_with_trace(delta, [0], trace, True, OUT).to_rows() == [((1, "x", "p", 1, 0.5), 2)]

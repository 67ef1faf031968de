"""The top-k state (runtime/kernels/topk.py) against the window kernel over the snapshot.

Goldens keep one or two runs, so here the merge factor is forced: 0 (runs never merge,
so every step adds one and reads gather from many), 4 (the default) and 1000 (every
step merges into one run); and a global top-k's head is made as small as its limit, so
that deletes empty it and steps read the runs. The prefix reads (the first limit + E live rows of a changed
partition per run, E the rows the change deletes from it) are what decides the result.
Random streams of inserts and deletes of present rows, with NULL keys, ties on the
ORDER BY keys and duplicate rows; after every step the integrated output must equal
window(ROW_NUMBER, limit) over the integrated input.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.logical.plan import OrderKey, WindowCall
from dbspc.compiler.types import SqlType
from dbspc.runtime.kernels import topk as topk_kernel
from dbspc.runtime.kernels.window import window
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

TYPES = (SqlType("INT"), SqlType("INT"), SqlType("STRING"))
ROW = st.tuples(
    st.one_of(st.none(), st.integers(0, 2)), st.one_of(st.none(), st.integers(0, 3)), st.sampled_from(["p", "q"])
)
SHAPES = [
    ((), (OrderKey(1, True, False),), 2),
    ((), (OrderKey(1, False, True),), 3),
    ((0,), (OrderKey(1, True, False),), 1),
    ((0,), (OrderKey(1, False, False), OrderKey(2, True, False)), 2),
]


@st.composite
def streams(
    draw: st.DrawFn, rows: st.SearchStrategy[Any] = ROW, steps_at_most: int = 8, inserts_at_most: int = 6
) -> list[list[tuple[Any, int]]]:
    """Steps of inserts of `rows` and deletes of rows present."""
    present: Counter[Any] = Counter()
    steps = []
    for _ in range(draw(st.integers(1, steps_at_most))):
        have = sorted(present.elements(), key=repr)
        chosen = draw(st.lists(st.integers(0, len(have) - 1), unique=True)) if have else []
        changes = [(have[i], -1) for i in chosen] + [(r, 1) for r in draw(st.lists(rows, max_size=inserts_at_most))]
        for r, w in changes:
            present[r] += w
        steps.append(changes)
    return steps


def _check_against_the_window(
    types: tuple[SqlType, ...],
    partition: tuple[int, ...],
    order: tuple[OrderKey, ...],
    limit: int,
    stream: list[list[tuple[Any, int]]],
) -> None:
    """A top-k state fed `stream`: after every step its integrated output is the window
    kernel's ROW_NUMBER <= limit over the integrated input."""
    out_types = (*types, SqlType("INT"))
    state = topk_kernel.TopKState(types, partition, order, limit)
    snapshot, out = ZSet.empty(types), ZSet.empty(out_types)
    rn = (WindowCall("row_number", SqlType("INT")),)
    for number, changes in enumerate(stream, start=1):
        delta = ZSet.from_rows([r for r, _ in changes], types, [w for _, w in changes])
        got, commit = state.step(delta)
        commit()
        snapshot = ZSet.concat([snapshot, delta], types).consolidate()
        out = ZSet.concat([out, got], out_types).consolidate()
        expected = window(snapshot, partition, order, rn, out_types, limit)
        assert _nan_named(out) == _nan_named(expected), f"step {number}"


def _nan_named(z: ZSet) -> list[tuple[tuple[Any, ...], int]]:
    """to_rows with NaN spelled out (NaN != NaN, so rows holding one never compare equal)."""
    return [(tuple("NaN" if v != v else v for v in r), w) for r, w in z.to_rows()]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
# (merge factor, row hashes reduced to this many values: rows that share a hash are
# told apart by comparing them)
# (a global top-k's head: its least depth and depth per limit row, and the pending rows
# folded into the runs: the default keeps these streams' whole integral in the head;
# (1, 1, 0) holds `limit` copies, so deletes send steps to the runs, and folds every step)
@pytest.mark.parametrize(
    ("merge_factor", "collide", "head"),
    [(0, None, (1, 1, 0)), (4, None, (64, 4, 16384)), (4, None, (1, 1, 0)), (4, None, (2, 1, 3)),
     (1000, None, (1, 1, 0)), (4, 1, (1, 1, 0))],
)  # fmt: skip
@settings(max_examples=30, deadline=None)
@given(stream=streams())
def test_topk_state_matches_the_window_over_the_snapshot(
    shape: tuple[tuple[int, ...], tuple[OrderKey, ...], int],
    merge_factor: int,
    collide: int | None,
    head: tuple[int, int, int],
    stream: list[list[tuple[Any, int]]],
) -> None:
    partition, order, limit = shape
    saved = (topk_kernel._MERGE_FACTOR, topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN)
    topk_kernel._MERGE_FACTOR = merge_factor
    topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN = head
    try:
        with colliding_hashes(collide):
            _check_against_the_window(TYPES, partition, order, limit, stream)
    finally:
        topk_kernel._MERGE_FACTOR, topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN = saved


def test_topk_state_restores_from_its_checkpoint_trace() -> None:
    """Checkpoints save the integral as the trace `traces()` names; a fresh state
    refilled from it and `restored()` continues exactly as the original."""
    partition, order, limit = SHAPES[3]
    first = topk_kernel.TopKState(TYPES, partition, order, limit)
    rows = [(g, x, s) for g in (None, 0, 1) for x in (None, 1, 2) for s in ("p", "q")]
    _, commit = first.step(ZSet.from_rows(rows, TYPES))
    commit()
    (saved,) = first.traces().values()
    second = topk_kernel.TopKState(TYPES, partition, order, limit)
    (fresh,) = second.traces().values()
    fresh.insert(saved.snapshot())
    second.restored(None)
    change = ZSet.from_rows([(0, 2, "q"), (1, 1, "p"), (None, 0, "p")], TYPES, [-1, -1, 1])
    assert first.step(change)[0].to_rows() == second.step(change)[0].to_rows()


@pytest.mark.parametrize(
    ("where", "limit"),
    [("rn = 1", 1), ("2 >= rn", 2), ("rn < 3 AND x > 0", 2), ("rn <= 5 AND rn <= 4", 4), ("rn <= 2 OR x > 0", None),
     ("rn >= 2", None), ("rn * 2 <= 4", None)],
)  # fmt: skip
def test_window_topk_recognises_only_filters_that_bound_rn(where: str, limit: int | None) -> None:
    """window_topk turns the window into topk only when every reader keeps rn <= k."""
    from dbspc.compiler.circuit import operators as op
    from dbspc.compiler.compile import compile_sql

    sql = f"""CREATE TABLE t (g INT, x INT);
    CREATE VIEW v AS SELECT g, x FROM (
      SELECT g, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn FROM t) s WHERE {where};"""
    c = compile_sql(sql).circuit
    found = [c[n] for n in c.live() if isinstance(c[n], op.TopKIncremental)]
    assert [o.limit for o in found] == ([limit] if limit is not None else [])


def test_window_topk_keeps_the_window_when_another_reader_sees_every_row() -> None:
    from dbspc.compiler.circuit import operators as op
    from dbspc.compiler.compile import compile_sql

    sql = """CREATE TABLE t (g INT, x INT);
    CREATE VIEW numbered AS SELECT g, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn FROM t;
    CREATE VIEW first AS SELECT g, x FROM (
      SELECT g, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn FROM t) s WHERE rn = 1;"""
    c = compile_sql(sql).circuit
    assert not any(isinstance(c[n], op.TopKIncremental) for n in c.live())


def test_pipeline_with_topk_restores_from_its_state_traces() -> None:
    """A pipeline refilled from another's state traces (what a checkpoint saves) and
    `restored` continues with the same deltas."""
    from dbspc.compiler.compile import compile_sql
    from dbspc.runtime.pipeline import Pipeline

    compiled = compile_sql(
        """CREATE TABLE t (g INT, x INT);
        CREATE VIEW top2 AS SELECT g, x FROM t ORDER BY x DESC, g LIMIT 2;
        CREATE VIEW best AS SELECT g, x FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) = 1;"""
    )
    first = Pipeline(compiled)
    types = first.table_types("t")
    first.step({"t": ZSet.from_rows([(g, x) for g in range(3) for x in range(5)], types)})
    second = Pipeline(compiled)
    saved = first.state_traces()
    for name, trace in second.state_traces().items():
        trace.insert(saved[name].snapshot())
    second.restored(first.state_meta())
    change = {"t": ZSet.from_rows([(0, 4), (1, 0), (2, 9)], types, [-1, -1, 1])}
    a, b = first.step(change), second.step(change)
    assert {v: d.to_rows() for v, d in a.items()} == {v: d.to_rows() for v, d in b.items()}
    assert a["top2"].to_rows() and a["best"].to_rows()


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(ROW, st.integers(1, 3)), max_size=12),
    shape=st.sampled_from(SHAPES),
    limit=st.sampled_from([None, 1, 2, 5]),
)
def test_row_numbers_of_one_partition_equal_the_general_path(
    rows: list[tuple[Any, int]], shape: tuple[tuple[int, ...], tuple[OrderKey, ...], int], limit: int | None
) -> None:
    """ROW_NUMBER over a single partition is numbered directly (window's `_numbered`); it
    must equal the general path's numbering, which a partition by a constant column
    takes (column 2 is 'p' on every row here)."""
    _, order, _ = shape
    batch = ZSet.from_rows([(a, b, "p") for (a, b, _), _ in rows], TYPES, [w for _, w in rows])
    rn = (WindowCall("row_number", SqlType("INT")), WindowCall("row_number", SqlType("BIGINT")))
    out = (*TYPES, SqlType("INT"), SqlType("BIGINT"))
    direct = window(batch, (), order, rn, out, limit)
    general = window(batch, (2,), order, rn, out, limit)
    assert direct.frame.schema == general.frame.schema
    assert direct.to_rows() == general.to_rows()


# A global top-k's head cuts a change by its first sort key in numpy (plain numbers, and
# decimals as scaled int64) or polars (with NULLs): doubles with NaN, ±inf and -0.0, and
# decimals, first in either direction, NULLs first or last.
NUMBERS = (SqlType("DOUBLE"), SqlType("DECIMAL", 6, 2), SqlType("INT"))
DOUBLES = st.sampled_from([None, float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.5, -2.25])
DECIMALS = st.one_of(st.none(), st.integers(-300, 300).map(lambda n: Decimal(n) / 100))
NUMBER_ROW = st.tuples(DOUBLES, DECIMALS, st.integers(0, 2))


@pytest.mark.parametrize("first", [0, 1])
@pytest.mark.parametrize(("desc", "nulls_first"), [(True, False), (False, True), (True, True), (False, False)])
@settings(max_examples=40, deadline=None)
@given(stream=streams(NUMBER_ROW, 10, 8))
def test_global_topk_head_over_numbers_matches_the_window(
    first: int, desc: bool, nulls_first: bool, stream: list[list[tuple[Any, int]]]
) -> None:
    order = (OrderKey(first, desc, nulls_first), OrderKey(2, False, False))
    saved = (topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN)
    topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN = 1, 1, 5
    try:
        _check_against_the_window(NUMBERS, (), order, 2, stream)
    finally:
        topk_kernel._HEAD_MIN, topk_kernel._HEAD_FACTOR, topk_kernel._FOLD_MIN = saved

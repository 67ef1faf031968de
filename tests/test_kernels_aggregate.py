"""GROUP BY aggregates: SQL semantics, and incremental == full recomputation (§7.2-7.4)."""

from __future__ import annotations

import math
from collections import Counter
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.errors import RuntimeSqlError
from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.types import BIGINT, DATE, DOUBLE, INT, STRING, TIMESTAMP, SqlType, array_of, decimal
from dbspc.runtime.kernels.aggregate import IncrementalAggregate, aggregate
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

# Input: group g (STRING), group h (INT), int value, double value, decimal value, string value.
TYPES: list[SqlType] = [STRING, INT, INT, DOUBLE, decimal(6, 2), STRING]

AGGS: list[AggCall] = [
    AggCall("count_star", None, BIGINT),
    AggCall("count", 2, BIGINT),
    AggCall("sum", 2, BIGINT),
    AggCall("avg", 2, DOUBLE),
    AggCall("min", 2, INT),
    AggCall("max", 2, INT),
    AggCall("count", 2, BIGINT, distinct=True),
    AggCall("sum", 2, BIGINT, distinct=True),
    AggCall("sum", 3, DOUBLE),
    AggCall("avg", 3, DOUBLE),
    AggCall("min", 3, DOUBLE),
    AggCall("max", 3, DOUBLE),
    AggCall("avg", 3, DOUBLE, distinct=True),
    AggCall("sum", 4, decimal(16, 2)),
    AggCall("avg", 4, decimal(10, 6)),
    AggCall("min", 4, decimal(6, 2)),
    AggCall("avg", 4, decimal(10, 6), distinct=True),
    AggCall("min", 5, STRING),
    AggCall("max", 5, STRING),
    AggCall("count", 5, BIGINT, distinct=True),
]
AGG_OUT = [a.type for a in AGGS]


def norm(z: ZSet) -> list[tuple[tuple[Any, ...], int]]:
    """to_rows with NaN made comparable."""
    return [(tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row), w) for row, w in z.to_rows()]


def run(
    rows: list[tuple[Any, ...]],
    group: list[int],
    aggs: list[AggCall],
    out: list[SqlType],
    weights: list[int] | None = None,
    is_global: bool = False,
) -> list[tuple[tuple[Any, ...], int]]:
    return aggregate(ZSet.from_rows(rows, TYPES, weights), group, aggs, out, is_global).to_rows()


def row(
    g: str | None,
    h: int | None = 0,
    i: int | None = None,
    d: float | None = None,
    m: Decimal | None = None,
    s: str | None = None,
) -> tuple[Any, ...]:
    return (g, h, i, d, m, s)


def test_group_by_basic_semantics() -> None:
    rows = [row("a", i=1), row("a", i=None), row("a", i=5), row("b", i=None)]
    aggs = [
        AggCall("count_star", None, BIGINT),
        AggCall("count", 2, BIGINT),
        AggCall("sum", 2, BIGINT),
        AggCall("avg", 2, DOUBLE),
        AggCall("min", 2, INT),
    ]
    out = [STRING, BIGINT, BIGINT, BIGINT, DOUBLE, INT]
    assert run(rows, [0], aggs, out) == [
        (("a", 3, 2, 6, 3.0, 1), 1),
        (("b", 1, 0, None, None, None), 1),
    ]


def test_weights_are_multiplicities() -> None:
    aggs = [
        AggCall("count_star", None, BIGINT),
        AggCall("sum", 2, BIGINT),
        AggCall("count", 2, BIGINT, distinct=True),
        AggCall("sum", 2, BIGINT, distinct=True),
    ]
    out = [STRING, BIGINT, BIGINT, BIGINT, BIGINT]
    assert run([row("a", i=2), row("a", i=3)], [0], aggs, out, [3, 1]) == [(("a", 4, 9, 2, 5), 1)]


def test_null_group_keys_form_one_group() -> None:
    aggs = [AggCall("count_star", None, BIGINT)]
    rows = [row(None, None), row(None, None), row(None, 1), row("a", None)]
    assert run(rows, [0, 1], aggs, [STRING, INT, BIGINT]) == [
        ((None, None, 2), 1),
        ((None, 1, 1), 1),
        (("a", None, 1), 1),
    ]


def test_global_aggregate_on_empty_input() -> None:
    out = aggregate(ZSet.empty(TYPES), [], AGGS, AGG_OUT, True)
    # COUNT(*), COUNT(x) and COUNT(DISTINCT x) are 0; everything else is NULL.
    assert out.to_rows() == [((0, 0, *[None] * 4, 0, *[None] * 12, 0), 1)]
    assert aggregate(ZSet.empty(TYPES), [0], AGGS, [STRING, *AGG_OUT], False).to_rows() == []


def test_float_sum_with_infinities_and_nan() -> None:
    aggs = [AggCall("sum", 3, DOUBLE), AggCall("max", 3, DOUBLE), AggCall("min", 3, DOUBLE)]
    out = [STRING, DOUBLE, DOUBLE, DOUBLE]
    inf = float("inf")
    got = run(
        [
            row("a", d=1.0),
            row("a", d=inf),
            row("b", d=inf),
            row("b", d=-inf),
            row("c", d=float("nan")),
            row("c", d=2.0),
        ],
        [0],
        aggs,
        out,
    )
    assert got[0] == (("a", inf, inf, 1.0), 1)
    assert math.isnan(got[1][0][1]) and got[1][0][2:] == (inf, -inf)
    assert math.isnan(got[2][0][1]) and math.isnan(got[2][0][2]) and got[2][0][3] == 2.0


def test_decimal_sum_and_avg_round_half_up() -> None:
    aggs = [AggCall("sum", 4, decimal(16, 2)), AggCall("avg", 4, decimal(10, 6)), AggCall("avg", 4, decimal(10, 0))]
    out = [STRING, decimal(16, 2), decimal(10, 6), decimal(10, 0)]
    rows = [
        row("a", m=Decimal("1.00")),
        row("a", m=Decimal("2.00")),
        row("a", m=Decimal("2.00")),
        row("b", m=Decimal("-1.00")),
        row("b", m=Decimal("-2.00")),
        row("c", m=Decimal("0.01")),
        row("c", m=Decimal("0.00")),
        row("c", m=Decimal("0.00")),
    ]
    assert run(rows, [0], aggs, out) == [
        (("a", Decimal("5.00"), Decimal("1.666667"), Decimal("2")), 1),
        (("b", Decimal("-3.00"), Decimal("-1.500000"), Decimal("-2")), 1),
        (("c", Decimal("0.01"), Decimal("0.003333"), Decimal("0")), 1),
    ]


def test_a_float_sum_of_negative_zeros_is_positive_zero() -> None:
    """Spark adds a group's doubles to a sum that starts at 0.0, so SUM and AVG (plain or
    DISTINCT) of -0.0 alone, or of -0.0 and 0.0, are 0.0 (checked in Spark 4: `SELECT g,
    SUM(y), AVG(y), SUM(DISTINCT y) FROM VALUES (1, -0.0D), (2, -0.0D), (2, 0.0D) ... GROUP
    BY g` gives 0.0 in every column); dbspc's grouped sums gave -0.0."""
    aggs = [
        AggCall("sum", 3, DOUBLE),
        AggCall("avg", 3, DOUBLE),
        AggCall("sum", 3, DOUBLE, distinct=True),
        AggCall("avg", 3, DOUBLE, distinct=True),
    ]
    out = [STRING, DOUBLE, DOUBLE, DOUBLE, DOUBLE]
    rows = [row("a", d=-0.0), row("b", d=-0.0), row("b", d=0.0), row("c", d=-0.0), row("c", d=-1.5), row("c", d=1.5)]
    got = run(rows, [0], aggs, out)
    assert [g for (g, *_), _ in got] == ["a", "b", "c"]
    for (_, *values), _ in got:
        assert all(v == 0.0 and math.copysign(1.0, v) == 1.0 for v in values), values


def test_sum_overflow_raises() -> None:
    types = [BIGINT]
    big = ZSet.from_rows([(2**62,), (2**62,)], types)
    with pytest.raises(RuntimeSqlError, match="integer overflow in SUM"):
        aggregate(big, [], [AggCall("sum", 0, BIGINT)], [BIGINT], True)
    dec = ZSet.from_rows([(Decimal("600"),), (Decimal("600"),)], [decimal(3, 0)])
    with pytest.raises(RuntimeSqlError, match="decimal overflow in SUM"):
        aggregate(dec, [], [AggCall("sum", 0, decimal(3, 0))], [decimal(3, 0)], True)


def test_incremental_min_survives_deleting_the_minimum() -> None:
    aggs = [AggCall("min", 2, INT), AggCall("max", 2, INT)]
    agg = IncrementalAggregate(TYPES, [0], aggs, [STRING, INT, INT], False)
    out, commit = agg.step(ZSet.from_rows([row("a", i=1), row("a", i=5), row("a", i=3)], TYPES))
    commit()
    assert out.to_rows() == [(("a", 1, 5), 1)]
    out, commit = agg.step(ZSet.from_rows([row("a", i=1)], TYPES, [-1]))
    commit()
    assert out.to_rows() == [(("a", 1, 5), -1), (("a", 3, 5), 1)]
    out, commit = agg.step(ZSet.from_rows([row("a", i=3), row("a", i=5)], TYPES, [-1, -1]))
    commit()
    assert out.to_rows() == [(("a", 3, 5), -1)]  # the group is empty: it disappears
    assert agg.state_rows() == 0


def test_incremental_global_emits_empty_row_first() -> None:
    aggs = [AggCall("count_star", None, BIGINT), AggCall("sum", 2, BIGINT)]
    agg = IncrementalAggregate(TYPES, [], aggs, [BIGINT, BIGINT], True)
    out, commit = agg.step(ZSet.empty(TYPES))
    commit()
    assert out.to_rows() == [((0, None), 1)]
    out, commit = agg.step(ZSet.empty(TYPES))
    commit()
    assert out.to_rows() == []
    out, commit = agg.step(ZSet.from_rows([row("a", i=4)], TYPES))
    commit()
    assert out.to_rows() == [((0, None), -1), ((1, 4), 1)]
    out, commit = agg.step(ZSet.from_rows([row("a", i=4)], TYPES, [-1]))
    commit()
    assert out.to_rows() == [((0, None), 1), ((1, 4), -1)]


def test_step_does_not_mutate_until_commit() -> None:
    types = [STRING, BIGINT]
    aggs = [AggCall("sum", 1, BIGINT), AggCall("max", 1, BIGINT)]
    agg = IncrementalAggregate(types, [0], aggs, [STRING, BIGINT, BIGINT], False)
    out, commit = agg.step(ZSet.from_rows([("a", 2**62)], types))
    commit()
    size = agg.state_rows()
    with pytest.raises(RuntimeSqlError):
        agg.step(ZSet.from_rows([("a", 2**62)], types))  # overflow: step rejected
    agg.step(ZSet.from_rows([("a", 1)], types))  # computed, never committed
    assert agg.state_rows() == size
    out, commit = agg.step(ZSet.from_rows([("a", 2)], types))
    commit()
    assert out.to_rows() == [(("a", 2**62, 2**62), -1), (("a", 2**62 + 2, 2**62), 1)]


# -- property: integrated incremental output == aggregate(integrated input) ----------

values_i = st.one_of(st.none(), st.integers(-3, 3))
values_d = st.one_of(st.none(), st.sampled_from([0.5, -1.5, 2.0, float("inf"), float("-inf"), float("nan")]))
values_m = st.one_of(st.none(), st.sampled_from([Decimal("1.25"), Decimal("-0.50"), Decimal("3.00")]))
row_st = st.tuples(
    st.one_of(st.none(), st.sampled_from(["a", "b"])),
    st.one_of(st.none(), st.integers(0, 1)),
    values_i,
    values_d,
    values_m,
    st.one_of(st.none(), st.sampled_from(["x", "y", "z"])),
)
op_st = st.one_of(
    st.tuples(st.just("ins"), row_st, st.integers(1, 2)),
    st.tuples(st.just("del"), st.integers(0, 100), st.integers(1, 2)),
)
steps_st = st.lists(st.lists(op_st, max_size=6), min_size=1, max_size=6)  # a stream of change batches
shape_st = st.sampled_from(["g", "gh", "global", "nogroup"])  # grouped by one or two columns, or not


def nan_safe(r: tuple[Any, ...]) -> tuple[Any, ...]:
    """Rows as dict keys: NaN != NaN, so key it by a marker."""
    return tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in r)


@settings(max_examples=50, deadline=None)
@given(
    steps=steps_st,
    shape=shape_st,
)
def test_incremental_equals_full(steps: list[list[tuple[str, Any, int]]], shape: str) -> None:
    check_stream(steps, shape, AGGS)


# Only linear aggregates: their batches are summed per group without consolidation (int64
# sums by group hash, else polars), so feed them unconsolidated, also with colliding hashes.
LINEAR = [a for a in AGGS if a.fn in ("count_star", "count", "sum", "avg") and not a.distinct and a.arg != 3]


# collect_list / collect_set over ints, decimals and strings (arrays sorted ascending).
COLLECTS = [
    AggCall("collect_list", 2, array_of(INT)),
    AggCall("collect_set", 2, array_of(INT)),
    AggCall("collect_list", 4, array_of(decimal(6, 2)), distinct=True),
    AggCall("collect_list", 5, array_of(STRING)),
    AggCall("count_star", None, BIGINT),
]


@settings(max_examples=40, deadline=None)
@given(
    steps=steps_st,
    shape=shape_st,
)
def test_incremental_collect_equals_full(steps: list[list[tuple[str, Any, int]]], shape: str) -> None:
    check_stream(steps, shape, COLLECTS)


# mode(x, true) and WITHIN GROUP (ORDER BY x DESC) over ints, doubles (-0.0 is 0.0, NaN one
# value), decimals and strings; the bitwise aggregates (xor counts copies) over ints.
MODE_AGGS = [
    AggCall("bit_and", 2, INT),
    AggCall("bit_or", 2, INT),
    AggCall("bit_xor", 2, INT),
    AggCall("bit_xor", 2, INT, distinct=True),
    AggCall("mode", 2, INT),
    AggCall("mode", 2, INT, descending=True),
    AggCall("mode", 3, DOUBLE),
    AggCall("mode", 4, decimal(6, 2), descending=True),
    AggCall("mode", 5, STRING),
    AggCall("count_star", None, BIGINT),
]


@pytest.mark.parametrize(("aggs", "split"), [(LINEAR, True), (MODE_AGGS, False)], ids=["linear", "mode"])
@settings(max_examples=40, deadline=None)
@given(
    steps=steps_st,
    shape=shape_st,
    collide=st.booleans(),
)
def test_incremental_equals_full_with_colliding_hashes(
    aggs: list[AggCall], split: bool, steps: list[list[tuple[str, Any, int]]], shape: str, collide: bool
) -> None:
    """LINEAR fed unconsolidated (split batches), and MODE_AGGS, also with colliding hashes."""
    with colliding_hashes(2 if collide else None):
        check_stream(steps, shape, aggs, split=split)


def _brute_mode(values: list[Any], descending: bool) -> Any:
    """The most frequent non-NULL value, the lowest (highest) of those that tie."""
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    tied = [v for v, n in counts.items() if n == top]
    return max(tied) if descending else min(tied)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["a", "b"]), values_i, st.sampled_from(["x", "y", "é", None])), max_size=25)
)
def test_mode_is_the_most_frequent_value_lowest_or_highest_on_ties(rows: list[tuple[Any, Any, Any]]) -> None:
    aggs = [AggCall("mode", 2, INT), AggCall("mode", 2, INT, descending=True), AggCall("mode", 5, STRING)]
    got = run([row(g, i=i, s=text) for g, i, text in rows], [0], aggs, [STRING, INT, INT, STRING])
    want = []
    for g in sorted({g for g, _, _ in rows}):
        ints, texts = [i for h, i, _ in rows if h == g], [t for h, _, t in rows if h == g]
        # strings in UTF-8 byte order, as Spark and polars compare them
        lowest_text = _brute_mode([t.encode() if t is not None else None for t in texts], False)
        want.append(((g, _brute_mode(ints, False), _brute_mode(ints, True), lowest_text and lowest_text.decode()), 1))
    assert got == want


def test_mode_counts_minus_zero_as_zero_and_nan_as_one_value() -> None:
    rows = [row("a", d=0.0), row("a", d=-0.0), row("a", d=-0.0), row("a", d=1.0), row("a", d=1.0)]
    assert run(rows, [0], [AggCall("mode", 3, DOUBLE)], [STRING, DOUBLE]) == [(("a", 0.0), 1)]
    nans = [row("a", d=float("nan")), row("a", d=float("nan")), row("a", d=2.0)]
    assert norm(aggregate(ZSet.from_rows(nans, TYPES), [0], [AggCall("mode", 3, DOUBLE)], [STRING, DOUBLE], False)) == [
        (("a", "NaN"), 1)
    ]


def test_collect_semantics() -> None:
    """NULLs skipped, duplicates kept by collect_list, [] for no values, sorted arrays."""
    rows = [row("a", i=3, s="y"), row("a", i=1, s="x"), row("a", i=None), row("b", i=None)]
    out = [STRING, *(a.type for a in COLLECTS)]
    assert run(rows, [0], COLLECTS, out, weights=[2, 1, 1, 1]) == [
        (("a", [1, 3, 3], [1, 3], [], ["x", "y", "y"], 4), 1),
        (("b", [], [], [], [], 1), 1),
    ]
    assert run([], [], COLLECTS, out[1:], is_global=True) == [(([], [], [], [], 0), 1)]


def test_incremental_collect_retracts_the_emitted_array() -> None:
    aggs = [AggCall("collect_list", 2, array_of(INT))]
    agg = IncrementalAggregate(TYPES, [0], aggs, [STRING, array_of(INT)], False)
    out, commit = agg.step(ZSet.from_rows([row("a", i=2), row("a", i=1), row("b", i=5)], TYPES, [1, 2, 1]))
    commit()
    assert out.to_rows() == [(("a", [1, 1, 2]), 1), (("b", [5]), 1)]
    out, commit = agg.step(ZSet.from_rows([row("a", i=1)], TYPES, [-1]))  # only group a is touched
    commit()
    assert out.to_rows() == [(("a", [1, 1, 2]), -1), (("a", [1, 2]), 1)]


def check_stream(
    steps: list[list[tuple[str, Any, int]]],
    shape: str,
    aggs: list[AggCall],
    split: bool = False,
    drop_indexes_at: int | None = None,
) -> None:
    """Integrated output == aggregate of the integrated input after every step. `split`
    feeds each change unconsolidated: every row as separate ±1 rows, plus a row inserted
    and deleted in the same batch. `drop_indexes_at`: before that step, the MIN/MAX
    indexes are dropped (as when one disagrees with a change), so the steps from then on
    read the multisets and the emitted rows, which grouped MIN/MAX do not keep while
    every argument is indexed."""
    group = {"g": [0], "gh": [0, 1], "global": [], "nogroup": []}[shape]
    is_global = shape == "global"
    out_types = [TYPES[c] for c in group] + [a.type for a in aggs]
    agg = IncrementalAggregate(TYPES, group, aggs, out_types, is_global)
    current: Counter[tuple[Any, ...]] = Counter()
    originals: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    total = ZSet.empty(out_types)
    for number, ops in enumerate(steps):
        if number == drop_indexes_at:
            for arg in list(agg._indexed):
                agg._drop_index(arg)
        change: Counter[tuple[Any, ...]] = Counter()
        for kind, what, w in ops:
            if kind == "ins":
                originals[nan_safe(what)] = what
                change[nan_safe(what)] += w
            else:  # delete an existing row, keeping the integrated input positive
                live = sorted((k for k, n in (current + change).items() if n > 0), key=repr)
                if live:
                    victim = live[what % len(live)]
                    change[victim] -= min(w, (current + change)[victim])
        rows = [(originals[k], n) for k, n in change.items() if n != 0]
        if split:
            rows = [(r, 1 if n > 0 else -1) for r, n in rows for _ in range(abs(n))]
            rows += [(r, w) for r in list(originals.values())[:1] for w in (1, -1)]
        delta = ZSet.from_rows([r for r, _ in rows], TYPES, [n for _, n in rows])
        out, commit = agg.step(delta)
        commit()
        current.update(change)
        current = Counter({k: n for k, n in current.items() if n > 0})
        total = ZSet.concat([total, out], out_types).consolidate()
        integrated = ZSet.from_rows([originals[k] for k in current], TYPES, list(current.values()))
        expected = aggregate(integrated, group, aggs, out_types, is_global)
        assert norm(total) == norm(expected)
        assert all(w == 1 for _, w in total.to_rows())


SUMS = [
    AggCall("count_star", None, BIGINT),
    AggCall("count", 2, BIGINT),
    AggCall("sum", 2, BIGINT),
    AggCall("sum", 4, decimal(16, 2)),
    AggCall("count", 5, BIGINT),
    AggCall("avg", 2, DOUBLE),
    AggCall("avg", 4, decimal(10, 6)),
    AggCall("avg", 4, decimal(10, 0)),
]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.tuples(row_st, st.integers(1, 3)), max_size=12),
    shape=shape_st,
)
def test_counts_and_sums_finalize_in_numpy_as_in_polars(rows: list[tuple[Any, int]], shape: str) -> None:
    """COUNTs, scale-keeping SUMs and exact AVGs skip polars' finalize query: same rows
    and types."""
    import dbspc.runtime.kernels.aggregate as module

    group = {"g": [0], "gh": [0, 1], "global": [], "nogroup": []}[shape]
    out_types = [TYPES[c] for c in group] + [a.type for a in SUMS]
    batch = ZSet.from_rows([r for r, _ in rows], TYPES, [w for _, w in rows])
    fast = aggregate(batch, group, SUMS, out_types, shape == "global")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "_finalize_directly", lambda *a: None)
        slow = aggregate(batch, group, SUMS, out_types, shape == "global")
    assert fast.frame.dtypes == slow.frame.dtypes
    assert norm(fast) == norm(slow)


@settings(max_examples=40, deadline=None)
@given(
    steps=steps_st,
    shape=st.sampled_from(["g", "gh"]),
    collide=st.sampled_from([None, 2, 1]),
)
def test_incremental_counts_and_sums_on_arrays(
    steps: list[list[tuple[str, Any, int]]], shape: str, collide: int | None
) -> None:
    """COUNTs and scale-keeping SUMs by group step on int64 arrays (_step_linear), probing
    the state by group hash; with colliding hashes they fall back to the general path."""
    with colliding_hashes(collide):
        check_stream(steps, shape, SUMS, split=True)


def test_counts_and_sums_step_on_arrays_and_agree_with_the_general_path() -> None:
    import dbspc.runtime.kernels.aggregate as module

    types = [STRING, INT, decimal(6, 2)]
    aggs = [
        AggCall("count_star", None, BIGINT),
        AggCall("count", 1, BIGINT),
        AggCall("sum", 2, decimal(16, 2)),
        AggCall("avg", 1, DOUBLE),
        AggCall("avg", 2, decimal(10, 6)),
    ]
    out_types = [STRING, BIGINT, BIGINT, decimal(16, 2), DOUBLE, decimal(10, 6)]
    batches = [
        ([("a", 1, Decimal("1.25")), ("b", None, None), ("a", 2, None)], [1, 1, 1]),
        ([("a", 1, Decimal("1.25")), ("b", 3, Decimal("-2.00"))], [-1, 2]),
        ([("b", None, None), ("c", None, Decimal("0.01"))], [1, 1]),  # b: COUNT(*) changes only
        ([("b", None, None), ("b", None, None)], [-1, 1]),  # nothing changes: no rows out
        ([("b", 3, Decimal("-2.00")), ("b", None, None)], [-2, -2]),  # b disappears
    ]
    fast = IncrementalAggregate(types, [0], aggs, out_types, False)
    slow = IncrementalAggregate(types, [0], aggs, out_types, False)
    taken = 0
    real = IncrementalAggregate._step_linear

    def counted(self: IncrementalAggregate, work: Any) -> Any:
        nonlocal taken
        result = real(self, work)
        taken += result is not None
        return result

    for rows, weights in batches:
        batch = ZSet.from_rows(rows, types, weights)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module.IncrementalAggregate, "_step_linear", counted)
            got, commit = fast.step(batch)
        commit()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module.IncrementalAggregate, "_step_linear", lambda self, work: None)
            want, commit = slow.step(batch)
        commit()
        assert got.frame.dtypes == want.frame.dtypes
        assert got.to_rows() == want.to_rows()
    assert taken == len(batches)
    assert fast.traces()["state"].snapshot().to_rows() == slow.traces()["state"].snapshot().to_rows()


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.lists(op_st, max_size=6), min_size=1, max_size=8),
    shape=st.sampled_from(["g", "gh"]),
    kind=st.sampled_from(["extrema", "distinct", "float"]),
)
def test_multisets_read_their_groups_linear_state_from_the_table(
    steps: list[list[tuple[str, Any, int]]], shape: str, kind: str
) -> None:
    """A grouped aggregate with multisets (MIN/MAX, DISTINCT, float MIN/MAX whose emitted
    rows are kept) keeps its COUNTs and SUMs in the compiled table: each step reads its
    groups' old and new states from it (`_table_states`), and answers as the same
    aggregate reading them from the state trace, which a checkpoint finds the same."""
    import dbspc.runtime.kernels.aggregate as module

    aggs = {
        "extrema": INDEXED_EXTREMA,
        "distinct": [a for a in AGGS if a.distinct and a.arg in (2, 4)],
        "float": [a for a in EXTREMA if a.arg == 3],
    }[kind] + SUMS[:5]
    group = {"g": [0], "gh": [0, 1]}[shape]
    out_types = [TYPES[c] for c in group] + [a.type for a in aggs]
    table = IncrementalAggregate(TYPES, group, aggs, out_types, False)
    trace = IncrementalAggregate(TYPES, group, aggs, out_types, False)
    assert table._groups is not None
    served = 0
    real = IncrementalAggregate._table_states

    def counted(self: IncrementalAggregate, groups: Any, work: Any) -> Any:
        nonlocal served
        result = real(self, groups, work)
        served += result is not None
        return result

    held: list[tuple[Any, ...]] = []
    changed = 0
    for number, ops in enumerate(steps):
        rows: list[tuple[Any, ...]] = []
        weights: list[int] = []
        for kind_, what, _ in ops:
            if kind_ == "ins":
                rows.append(what)
                held.append(what)
                weights.append(1)
            elif held:
                rows.append(held.pop(what % len(held)))
                weights.append(-1)
        batch = ZSet.from_rows(rows, TYPES, weights)
        changed += len(batch.consolidate()) > 0
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module.IncrementalAggregate, "_table_states", counted)
            got, commit = table.step(batch)
        commit()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(module.IncrementalAggregate, "_table_states", lambda *a: None)
            want, commit = trace.step(batch)
        commit()
        assert norm(got) == norm(want), number
    assert served == changed
    assert table._groups is not None and (trace._groups is None) == bool(changed)
    assert norm(table.traces()["state"].snapshot()) == norm(trace.traces()["state"].snapshot())


@settings(max_examples=300, deadline=None)
@given(
    s=st.integers(-(2**62) + 1, 2**62 - 1),
    k=st.integers(0, 2**40),
    in_scale=st.integers(0, 4),
    out_scale=st.integers(0, 8),
)
def test_an_avg_from_its_sum_and_count_rounds_half_up_exactly(s: int, k: int, in_scale: int, out_scale: int) -> None:
    """`_output_values` of an AVG in int64 numpy: the decimal quotient rounded half up
    (away from zero), computed here in Python's integers; a DOUBLE as (s / 10^scale) / k;
    None only when the quotient could leave int64."""
    from fractions import Fraction

    from dbspc.runtime.kernels.aggregate import _Agg, _output_values

    in_type = decimal(18, in_scale)
    sums, counts = np.array([s, -s, 0], dtype=np.int64), np.array([k, k, k], dtype=np.int64)
    as_double = _Agg(0, AggCall("avg", 0, DOUBLE), in_type, DOUBLE)
    got = _output_values(as_double, sums, counts)
    assert got is not None
    if k:
        assert got[0] == (s / float(10**in_scale)) / float(k)
    as_decimal = _Agg(0, AggCall("avg", 0, decimal(38, out_scale)), in_type, decimal(38, out_scale))
    got = _output_values(as_decimal, sums, counts)
    if got is None:
        return
    if k:
        exact = Fraction(s * 10**out_scale, k * 10**in_scale)
        rounded = int(abs(exact) + Fraction(1, 2)) * (1 if exact >= 0 else -1)
        assert [int(v) for v in got] == [rounded, -rounded, 0]
        assert abs(rounded) < 2**63


def test_counts_and_sums_beyond_int64_take_the_exact_path() -> None:
    types = [STRING, BIGINT]
    agg = IncrementalAggregate(types, [0], [AggCall("sum", 1, BIGINT)], [STRING, BIGINT], False)
    out, commit = agg.step(ZSet.from_rows([("a", 2**62)], types))
    commit()
    size = agg.state_rows()
    with pytest.raises(RuntimeSqlError, match="integer overflow in SUM"):
        agg.step(ZSet.from_rows([("a", 2**62)], types))
    assert agg.state_rows() == size
    out, commit = agg.step(ZSet.from_rows([("a", -(2**62)), ("a", 5)], types))
    commit()
    assert out.to_rows() == [(("a", 5), 1), (("a", 2**62), -1)]


# MIN/MAX alone (over ints, doubles with ±inf/NaN, decimals, strings), beside COUNT and
# SUM or not: a step reads the old extremes from the emitted rows (_extremum_values), or,
# grouped with every argument indexed, from the indexes before the change.
EXTREMA = [a for a in AGGS if a.fn in ("min", "max")]
INDEXED_EXTREMA = [a for a in EXTREMA if a.arg in (2, 4)]  # INT and DECIMAL(6, 2)


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(st.lists(op_st, max_size=6), min_size=1, max_size=8),
    shape=shape_st,
    with_sums=st.booleans(),
    collide=st.booleans(),
)
def test_incremental_min_max_equals_full(
    steps: list[list[tuple[str, Any, int]]], shape: str, with_sums: bool, collide: bool
) -> None:
    with colliding_hashes(2 if collide else None):
        check_stream(steps, shape, EXTREMA + (SUMS if with_sums else []))


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(st.lists(op_st, max_size=6), min_size=1, max_size=8),
    shape=shape_st,
    with_sums=st.booleans(),
    drop=st.sampled_from([None, 0, 1, 3]),
)
def test_indexed_min_max_equals_full_and_after_the_index_is_dropped(
    steps: list[list[tuple[str, Any, int]]], shape: str, with_sums: bool, drop: int | None
) -> None:
    """MIN/MAX of INT and DECIMAL alone, every argument indexed: grouped, the old extremes
    come from the indexes and the emitted rows are not kept, until the indexes are dropped
    (`drop`: before that step) and the rows are rebuilt from the state and multisets."""
    check_stream(steps, shape, INDEXED_EXTREMA + (SUMS if with_sums else []), drop_indexes_at=drop)


@pytest.mark.parametrize("indexed", [False, True])
def test_min_max_reads_a_whole_group_only_when_its_extreme_goes(indexed: bool) -> None:
    """Without its ordered index (extrema_index.py) a group is read whole when it loses
    an extreme; with it, never."""
    aggs = [AggCall("min", 2, INT), AggCall("max", 2, INT), AggCall("count_star", None, BIGINT)]
    agg = IncrementalAggregate(TYPES, [0], aggs, [STRING, INT, INT, BIGINT], False)
    if not indexed:
        agg._indexed.clear()
    out, commit = agg.step(ZSet.from_rows([row("a", i=i) for i in range(100)] + [row("b", i=7)], TYPES))
    commit()
    values = agg._msets[2]
    read: list[int] = []
    real = values.lookup

    def spy(probe: Any, cols: Any, consolidated: bool = True) -> Any:
        found = real(probe, cols, consolidated)
        read.append(found.height)
        return found

    values.lookup = spy  # type: ignore[method-assign]
    steps = [
        ([row("a", i=50), row("a", i=-1), row("b", i=7)], [-1, 1, 1], [(("a", -1, 99, 100), 1), (("b", 7, 7, 2), 1)]),
        ([row("a", i=99), row("a", i=98)], [1, -1], []),  # the row stays; 99 is held twice now
        ([row("a", i=99)], [-1], [(("a", -1, 99, 99), 1)]),
    ]
    for rows, weights, born in steps:
        out, commit = agg.step(ZSet.from_rows(rows, TYPES, weights))
        commit()
        assert [r for r in out.to_rows() if r[1] > 0] == born
    assert read == []  # no extreme was deleted: no group was read
    out, commit = agg.step(ZSet.from_rows([row("a", i=99), row("b", i=7)], TYPES, [-1, -1]))
    commit()
    assert read == ([] if indexed else [99])  # only group a lost its maximum: read once, whole
    assert [r for r in out.to_rows() if r[1] > 0] == [(("a", -1, 97, 98), 1), (("b", 7, 7, 1), 1)]


def test_min_max_rows_are_rebuilt_from_a_checkpoint_that_lacks_them(tmp_path: Any) -> None:
    """A checkpoint written before MIN/MAX kept their emitted rows has no `.out` trace."""
    from dbspc.runtime.pipeline import Pipeline
    from dbspc.runtime.refresh.checkpoint import Manifest, StateStore

    program = """
    CREATE TABLE t (g STRING, x INT);
    CREATE VIEW v AS SELECT g, MIN(x) AS lo, MAX(x) AS hi, COUNT(*) AS n FROM t GROUP BY g;
    CREATE VIEW w AS SELECT MAX(x) AS hi FROM t;
    """
    types = (STRING, INT)
    p = Pipeline.from_sql(program)
    p.step({"t": ZSet.from_rows([("a", 1), ("a", 5), ("b", 2), ("b", None)], types)})
    older = {k: t for k, t in p.state_traces().items() if not k.endswith(".out")}
    assert len(older) < len(p.state_traces())
    section, _ = StateStore(tmp_path).save(1, older)
    manifest = Manifest(refresh_id=1, program_hash="", program={}, state=section, pipeline=p.state_meta())
    back = Pipeline.from_sql(program)
    StateStore(tmp_path).load(manifest, back.state_traces())
    back.restored(manifest.pipeline)
    for rows, weights in [([("a", 5), ("b", 9)], [-1, 1]), ([("a", 1), ("b", 9)], [-1, -1])]:
        change = {"t": ZSet.from_rows(rows, types, weights)}
        want, got = p.step(change), back.step(change)
        assert {v: z.to_rows() for v, z in got.items()} == {v: z.to_rows() for v, z in want.items()}
    # a trace that is not derived is still required
    del section[next(k for k in section if k.startswith("table."))]
    with pytest.raises(Exception, match="does not match"):
        StateStore(tmp_path).load(manifest, Pipeline.from_sql(program).state_traces())


def test_min_max_index_reloads_after_a_restore(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordered MIN/MAX index is derived state: a restored pipeline loads it from the
    multiset traces at its first step, and then answers as the pipeline that never
    stopped, and as one without the index, through deletes of extremes and NULL keys."""
    from dbspc.runtime.kernels import extrema_index
    from dbspc.runtime.pipeline import Pipeline
    from dbspc.runtime.refresh.checkpoint import Manifest, StateStore

    program = """
    CREATE TABLE t (g STRING, d DATE, x DECIMAL(12,2));
    CREATE VIEW v AS SELECT g, MIN(d) AS first, MAX(d) AS last, MAX(x) AS top, COUNT(*) AS n FROM t GROUP BY g;
    CREATE VIEW w AS SELECT MIN(x) AS low FROM t;
    """
    types = (STRING, DATE, decimal(12, 2))
    rng = np.random.default_rng(5)
    held: list[tuple[Any, ...]] = []

    def change() -> dict[str, ZSet]:
        rows, weights = [], []
        for _ in range(int(rng.integers(1, 12))):
            if held and rng.random() < 0.5:
                rows.append(held.pop(int(rng.integers(len(held)))))
                weights.append(-1)
            else:
                g = [None, "a", "b", ""][int(rng.integers(4))]
                day = date(2020, 1, 1) + timedelta(days=int(rng.integers(0, 30)))
                row = (g, day, Decimal(int(rng.integers(-500, 500))) / 100)
                held.append(row)
                rows.append(row)
                weights.append(1)
        return {"t": ZSet.from_rows(rows, types, weights)}

    live = Pipeline.from_sql(program)
    with monkeypatch.context() as m:
        m.setattr(extrema_index.ExtremaIndex, "supports", staticmethod(lambda *_: False))
        plain = Pipeline.from_sql(program)
    assert all(not ev._indexed for ev in plain.executor.states.values() if hasattr(ev, "_indexed"))
    back = None
    for step in range(40):
        z = change()
        want = {v: sorted(o.to_rows(), key=repr) for v, o in live.step(z).items()}
        assert {v: sorted(o.to_rows(), key=repr) for v, o in plain.step(z).items()} == want
        if back is not None:
            assert {v: sorted(o.to_rows(), key=repr) for v, o in back.step(z).items()} == want
        if step == 20:
            section, _ = StateStore(tmp_path).save(1, live.state_traces())
            manifest = Manifest(refresh_id=1, program_hash="", program={}, state=section, pipeline=live.state_meta())
            back = Pipeline.from_sql(program)
            StateStore(tmp_path).load(manifest, back.state_traces())
            back.restored(manifest.pipeline)
    assert back is not None and any(
        ev._indexes and all(ev._indexes.values()) for ev in back.executor.states.values() if hasattr(ev, "_indexes")
    )


def _spark_percentile(values: list[float], fraction: float) -> float | None:
    """Spark's Percentile.getPercentile, written out: the values in ascending order (NaN
    last), position (n - 1) * fraction, interpolated between its floor and ceiling."""
    if not values:
        return None
    ordered = sorted(values, key=lambda v: (math.isnan(v), v))
    position = (len(ordered) - 1) * fraction
    lower, higher = math.floor(position), math.ceil(position)
    low, high = ordered[lower], ordered[higher]
    if lower == higher or low == high:
        return low
    return (higher - position) * low + (position - lower) * high


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.one_of(st.none(), st.floats(-1e6, 1e6), st.sampled_from([0.5, 2.5]))),
        max_size=30,
    ),
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.333, 0.9, 1.0]),
)
def test_percentile_incrementally_equals_spark_formula(rows: list[tuple[int, float | None]], fraction: float) -> None:
    """percentile(x, p) per group, maintained over inserts and then deletes of half the
    rows, equals Spark's formula over the values left after each step (a NaN compares
    by its text: NaN != NaN)."""
    types = (INT, DOUBLE)
    agg = IncrementalAggregate(types, [0], [AggCall("percentile", 1, DOUBLE, fraction=fraction)], [INT, DOUBLE], False)
    live: Counter[tuple[int, float | None]] = Counter()
    view: Counter[tuple[Any, ...]] = Counter()
    half = len(rows) // 2
    for batch in ([(r, 1) for r in rows], [(r, -1) for r in rows[:half]]):
        for r, w in batch:
            live[r] += w
        out, commit = agg.step(ZSet.from_rows([r for r, _ in batch], types, [w for _, w in batch]))
        commit()
        for out_row, w in out.to_rows():
            view[(out_row[0], repr(out_row[1]))] += w
        expected = set()
        for g in {g for (g, _), n in live.items() if n > 0}:
            values = [x for (h, x), n in live.items() for _ in range(n) if h == g and x is not None]
            expected.add((g, repr(_spark_percentile(values, fraction))))
        assert {k for k, w in view.items() if w} == expected
        assert all(w in (0, 1) for w in view.values())


# MIN/MAX over integers, dates, timestamps and decimals by group: the extremes in numpy
# (`_extremes`), the group join by hash (`_rows_of_groups`) and the copying finalize,
# against polars' group-by, join and finalize query.
DATED: list[SqlType] = [STRING, BIGINT, DATE, TIMESTAMP, decimal(18, 3)]
DATED_AGGS = [
    AggCall("min", 1, BIGINT),
    AggCall("max", 2, DATE),
    AggCall("min", 2, DATE),
    AggCall("max", 3, TIMESTAMP),
    AggCall("min", 4, decimal(18, 3)),
    AggCall("max", 4, decimal(18, 3)),
    AggCall("count_star", None, BIGINT),
]
dated_row = st.tuples(
    st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
    st.one_of(st.none(), st.integers(-(2**62), 2**62)),
    st.one_of(st.none(), st.dates(date(1, 1, 1), date(9999, 12, 31))),
    st.one_of(st.none(), st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31))),
    st.one_of(st.none(), st.decimals(-(10**15) + 1, 10**15 - 1, places=3)),
)


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.lists(st.tuples(dated_row, st.sampled_from([1, 2, -1])), max_size=8), min_size=1, max_size=6),
    group=st.sampled_from([[0], [0, 1], [2]]),
    collide=st.booleans(),
)
def test_min_max_in_numpy_equal_polars(
    steps: list[list[tuple[tuple[Any, ...], int]]], group: list[int], collide: bool
) -> None:
    import dbspc.runtime.kernels.aggregate as module

    out_types = [DATED[c] for c in group] + [a.type for a in DATED_AGGS]
    fast = IncrementalAggregate(DATED, group, DATED_AGGS, out_types, False)
    slow = IncrementalAggregate(DATED, group, DATED_AGGS, out_types, False)
    live: Counter[tuple[Any, ...]] = Counter()
    for ops in steps:
        change: Counter[tuple[Any, ...]] = Counter()
        for r, w in ops:
            change[r] += w if w > 0 else -min(1, (live + change)[r])  # never below zero
        rows = [(r, w) for r, w in change.items() if w]
        delta = ZSet.from_rows([r for r, _ in rows], DATED, [w for _, w in rows])
        integrated = ZSet.from_rows(list((live + change).elements()), DATED)
        with colliding_hashes(2 if collide else None):
            a, commit_a = fast.step(delta)
            full_fast = aggregate(integrated, group, DATED_AGGS, out_types, False)
            with pytest.MonkeyPatch.context() as mp:
                for name in ("_extremes", "_rows_of_groups", "_finalize_directly"):
                    mp.setattr(module, name, lambda *args: None)
                b, commit_b = slow.step(delta)
                full_slow = aggregate(integrated, group, DATED_AGGS, out_types, False)
            commit_a()
            commit_b()
        assert a.frame.dtypes == b.frame.dtypes == full_slow.frame.dtypes
        assert sorted(a.to_rows(), key=repr) == sorted(b.to_rows(), key=repr)
        assert sorted(full_fast.to_rows(), key=repr) == sorted(full_slow.to_rows(), key=repr)
        live = +(live + change)

"""distinct and its incremental form H (DBSP §4, Prop 4.7)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.types import INT, STRING, SqlType
from dbspc.runtime.kernels.distinct import distinct, distinct_delta, positive_part, positive_part_delta
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

TYPES: list[SqlType] = [INT, STRING]


def test_seeds_digest_example_b() -> None:
    r = ZSet.from_rows([("joe",), ("anne",)], [STRING], [1, -1])
    assert distinct(r).to_rows() == [(("joe",), 1)]


def test_distinct_consolidates_first() -> None:
    z = ZSet.from_rows([(1, "a"), (1, "a"), (2, None), (2, None)], TYPES, [2, -1, -1, -1])
    assert distinct(z).to_rows() == [((1, "a"), 1)]


def test_distinct_delta_rules() -> None:
    t = Trace(TYPES, (0, 1))
    t.insert(ZSet.from_rows([(1, "a"), (2, "b"), (None, None)], TYPES, [2, 1, 1]))
    d = ZSet.from_rows([(1, "a"), (2, "b"), (3, "c"), (None, None), (4, "d")], TYPES, [-1, -1, 2, 1, -1])
    # (1,a): 2 -> 1 stays; (2,b): 1 -> 0 leaves; (3,c): 0 -> 2 enters;
    # (NULL,NULL): 1 -> 2 stays; (4,d): 0 -> -1 stays out.
    assert distinct_delta(t, d).to_rows() == [((2, "b"), -1), ((3, "c"), 1)]
    assert len(t.snapshot()) == 3  # not modified


def test_distinct_delta_zero_columns() -> None:
    t = Trace([], ())
    d = ZSet.from_rows([()], [], [2])
    assert distinct_delta(t, d).to_rows() == [((), 1)]
    t.insert(d)
    assert distinct_delta(t, d.negate()).to_rows() == [((), -1)]


row_st = st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.sampled_from("ab")))


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(st.lists(st.tuples(row_st, st.integers(-2, 2).filter(bool)), max_size=6), min_size=1, max_size=6),
    collide=st.sampled_from([None, 2, 1]),
    relu=st.booleans(),
)
def test_integrated_h_equals_distinct_of_integral(
    steps: list[list[tuple[Any, int]]], collide: int | None, relu: bool
) -> None:
    """Σ H(i, d) over the steps equals f(∫d), for f = distinct and relu, also when the
    rows' hashes collide (the delta then reads the weights by an exact lookup)."""
    f, f_delta = (positive_part, positive_part_delta) if relu else (distinct, distinct_delta)
    t = Trace(TYPES, (0, 1))
    out = ZSet.empty(TYPES)
    with colliding_hashes(collide):
        for rows in steps:
            d = ZSet.from_rows([r for r, _ in rows], TYPES, [w for _, w in rows])
            out = ZSet.concat([out, f_delta(t, d)], TYPES).consolidate()
            t.insert(d)
            assert out.to_rows() == f(t.snapshot()).to_rows()

"""A linear aggregate's group table (runtime/kernels/group_sums.py, native/groupsums.h):
the table against a dict, and the aggregate on it against the aggregate on its trace
alone, with its trace read (a checkpoint) and restored from at random steps."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.types import BIGINT, DATE, INT, STRING, decimal
from dbspc.runtime.kernels import group_sums
from dbspc.runtime.kernels.aggregate import IncrementalAggregate
from dbspc.runtime.native import groupsums
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes


@pytest.mark.parametrize("collide", [None, 3, 1])
@pytest.mark.parametrize("drains", [0.1, 0.005])
def test_the_table_adds_removes_and_drains_as_a_dict_does(collide: int | None, drains: float) -> None:
    """Random adds over few keys (so groups die and come back), against a dict; a drain
    lists each changed group once: held ones with their sums, removed ones by key. The
    slots listed for a drain stay within twice the table (rare drains, and every hash
    alike, move entries back and forth and rescan the flags)."""
    rng = np.random.default_rng(collide or 0)
    with colliding_hashes(collide):
        table = groupsums.Table(2, 2)
        model: dict[tuple[int, int], list[int]] = {}
        changed: set[tuple[int, int]] = set()
        for _ in range(300):
            keys = np.unique(rng.integers(0, 12, (int(rng.integers(1, 8)), 2)), axis=0).astype(np.int64)
            deltas = np.zeros((len(keys), 2), dtype=np.int64)
            for i, key in enumerate(map(tuple, keys.tolist())):
                held = model.get(key, [0, 0])
                # a count never below zero, and zero only by a change that empties the group
                deltas[i] = [max(-held[0], int(rng.integers(-2, 3))), int(rng.integers(-5, 6))]
                after = [held[0] + int(deltas[i, 0]), held[1] + int(deltas[i, 1])]
                if key in model or after[0]:
                    changed.add(key)
                if after[0]:
                    model[key] = after
                else:
                    model.pop(key, None)
            table.add(keys, deltas)
            _, _, present, sums = table.gather(keys, np.zeros((len(keys), 2), dtype=np.int64))  # (keys distinct)
            assert present.tolist() == [int(tuple(k) in model) for k in keys.tolist()]
            assert sums.tolist() == [model.get(tuple(k), [0, 0]) for k in keys.tolist()]
            assert len(table) == len(model)
            assert table.listed() <= 2 * table.slots() + 65
            if rng.random() < drains:
                held, held_sums, gone = table.drain()
                got = {tuple(k): s for k, s in zip(held.tolist(), held_sums.tolist(), strict=True)}
                assert len(got) == len(held)
                assert got == {k: model[k] for k in changed if k in model}
                assert sorted(map(tuple, gone.tolist())) == sorted(k for k in changed if k not in model)
                changed.clear()


@pytest.mark.parametrize("collide", [None, 3, 1])
def test_gather_groups_a_change_and_reads_the_held_sums(collide: int | None) -> None:
    """A change's rows, keys repeated, grouped in the order first seen with their parts
    summed, and each group's sums held before, against a dict; the table is not changed."""
    rng = np.random.default_rng(collide or 7)
    with colliding_hashes(collide):
        table = groupsums.Table(2, 3)
        held = np.unique(rng.integers(0, 20, (15, 2)), axis=0).astype(np.int64)
        sums = rng.integers(1, 50, (len(held), 3)).astype(np.int64)
        table.add(held, sums)
        model = {tuple(k): s for k, s in zip(held.tolist(), sums.tolist(), strict=True)}
        for n in (0, 1, 40, 300):
            keys = rng.integers(0, 25, (n, 2)).astype(np.int64)
            parts = rng.integers(-9, 10, (n, 3)).astype(np.int64)
            reps, deltas, present, old = table.gather(keys, parts)
            first: dict[tuple[int, int], int] = {}
            for i, k in enumerate(map(tuple, keys.tolist())):
                first.setdefault(k, i)
            assert reps.tolist() == list(first.values())
            for g, k in enumerate(first):
                mine = [i for i, row in enumerate(keys.tolist()) if tuple(row) == k]
                assert deltas[g].tolist() == parts[mine].sum(axis=0).tolist()
                assert bool(present[g]) == (k in model)
                assert old[g].tolist() == model.get(k, [0, 0, 0])
            assert len(table) == len(model)


def test_a_drain_reads_the_groups_changed_not_every_slot() -> None:
    """After a drain, a change to a few of 50,000 groups lists their slots alone, and the
    next drain hands over those groups."""
    table = groupsums.Table(1, 2)
    keys = np.arange(50_000, dtype=np.int64).reshape(-1, 1)
    table.add(keys, np.ones((50_000, 2), dtype=np.int64))
    assert len(table.drain()[0]) == 50_000 and table.listed() == 0
    table.add(keys[[7, 70, 700]], np.array([[1, 5], [1, 5], [1, 5]], dtype=np.int64))
    table.add(keys[[70]], np.array([[-2, -6]], dtype=np.int64))  # the group empties
    assert table.listed() <= 3
    held, sums, gone = table.drain()
    assert sorted(held.ravel().tolist()) == [7, 700] and sums.tolist() == [[2, 6], [2, 6]]
    assert gone.ravel().tolist() == [70]


TYPES = [STRING, INT, decimal(8, 2), DATE]
AGGS = [AggCall("count_star", None, BIGINT), AggCall("count", 2, BIGINT), AggCall("sum", 2, decimal(18, 2))]
ROWS = st.tuples(
    st.sampled_from(["a", "b", "c", None, "ä"]),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.decimals(-50, 50, places=2)),
    st.sampled_from([None, date(2024, 2, 29), date(1969, 12, 31)]),
)


def _on_table(aggregate: IncrementalAggregate) -> bool:
    return aggregate._groups is not None


def _copy(source: IncrementalAggregate, group: list[int], out_types: list[Any]) -> IncrementalAggregate:
    """A new aggregate restored from `source`'s checkpoint: its traces, then its meta."""
    restored = IncrementalAggregate(TYPES, group, AGGS, out_types, False)
    for name, trace in restored.traces().items():
        trace.insert(source.traces()[name].snapshot())
    restored.restored(source.meta())
    return restored


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.lists(st.tuples(ROWS, st.sampled_from([1, 1, 2, -1])), max_size=8), min_size=1, max_size=12),
    group=st.sampled_from([[0], [0, 1], [3, 0]]),
    reads=st.lists(st.sampled_from(["step", "read", "restore"]), min_size=12, max_size=12),
    collide=st.sampled_from([None, 2]),
)
def test_an_aggregate_on_its_table_agrees_with_one_on_its_trace(
    steps: list[list[tuple[tuple[Any, ...], int]]], group: list[int], reads: list[str], collide: int | None
) -> None:
    """Each step's output equals the trace-only aggregate's, and the state trace read
    through traces() (a checkpoint) equals its state trace, whether or not the table was
    read or restored from in between. Deletes only take rows that are there."""
    out_types = [TYPES[c] for c in group] + [a.type for a in AGGS]
    with colliding_hashes(collide):
        table = IncrementalAggregate(TYPES, group, AGGS, out_types, False)
        trace = IncrementalAggregate(TYPES, group, AGGS, out_types, False)
        trace._groups = None
        assert _on_table(table)
        held: dict[tuple[Any, ...], int] = {}
        for ops, read in zip(steps, reads, strict=False):
            change: dict[tuple[Any, ...], int] = {}
            for row, w in ops:
                if w < 0 and held.get(row, 0) + change.get(row, 0) <= 0:
                    continue
                change[row] = change.get(row, 0) + w
            rows = [r for r, w in change.items() if w]
            delta = ZSet.from_rows(rows, TYPES, [change[r] for r in rows])
            for r in rows:
                held[r] = held.get(r, 0) + change[r]
            got, commit = table.step(delta)
            commit()
            want, commit = trace.step(delta)
            commit()
            assert sorted(got.to_rows(), key=repr) == sorted(want.to_rows(), key=repr)
            if read == "read":
                mine = table.traces()["state"].snapshot().to_rows()
                assert sorted(mine, key=repr) == sorted(trace.traces()["state"].snapshot().to_rows(), key=repr)
                assert table.state_rows() == len(mine)  # the live groups
            elif read == "restore":
                table = _copy(table, group, out_types)
                assert _on_table(table)
        assert sorted(table.traces()["state"].snapshot().to_rows(), key=repr) == sorted(
            trace.traces()["state"].snapshot().to_rows(), key=repr
        )


def test_a_step_on_the_table_leaves_the_trace_alone_until_it_is_read() -> None:
    """The point of the table: steps add to it in place; the trace is written only when
    read (here, by traces()), and then holds every group's row."""
    types, group = [BIGINT, decimal(10, 2)], [0]
    aggs = [AggCall("count_star", None, BIGINT), AggCall("sum", 1, decimal(20, 2))]
    aggregate = IncrementalAggregate(types, group, aggs, [BIGINT, BIGINT, decimal(20, 2)], False)
    for step in range(5):
        rows = [(g, Decimal(step) + Decimal("0.25")) for g in range(10)]
        _, commit = aggregate.step(ZSet.from_rows(rows, types))
        commit()
    assert len(aggregate._state) == 0 and aggregate.state_rows() == 10
    state = aggregate.traces()["state"].snapshot().to_rows()
    # (group, rows, non-NULL amounts, their unscaled sum: 0.25 + 1.25 + ... + 4.25 = 11.25)
    assert sorted(state) == [((g, 5, 5, Decimal(1125)), 1) for g in range(10)]


def test_removed_groups_reach_the_trace_once_their_keys_pile_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream of groups born and removed (an order id inserted, then deleted) would keep
    their keys for the trace without bound; past the backlog the commit hands them over."""
    monkeypatch.setattr(group_sums, "_REMOVED_BACKLOG", 8)
    types = [BIGINT, BIGINT]
    aggs = [AggCall("count_star", None, BIGINT), AggCall("sum", 1, BIGINT)]
    aggregate = IncrementalAggregate(types, [0], aggs, [BIGINT, BIGINT, BIGINT], False)
    for step in range(20):
        rows = [(step, 1), (step - 1, 1)] if step else [(step, 1)]
        _, commit = aggregate.step(ZSet.from_rows(rows, types, [1, -1] if step else [1]))
        commit()
        assert aggregate._groups is not None and aggregate._groups.removed < 8
    assert aggregate.traces()["state"].snapshot().to_rows() == [((19, 1, 1, 1), 1)]


def test_a_step_the_table_cannot_take_reads_an_up_to_date_trace() -> None:
    """A value too large for the int64 sums sends the step to the general path, which reads
    the trace: it must first hear of what the table holds (here, group a's first row),
    else the step would emit a's new row without retracting its old one."""
    types = [STRING, BIGINT]
    aggs = [AggCall("count_star", None, BIGINT), AggCall("sum", 1, BIGINT)]
    out_types = [STRING, BIGINT, BIGINT]
    table = IncrementalAggregate(types, [0], aggs, out_types, False)
    trace = IncrementalAggregate(types, [0], aggs, out_types, False)
    trace._groups = None
    for rows in ([("a", 1), ("b", 5)], [("a", 2**62)], [("a", -(2**61)), ("b", 1)]):
        got, commit = table.step(ZSet.from_rows(rows, types))
        commit()
        want, commit = trace.step(ZSet.from_rows(rows, types))
        commit()
        assert got.to_rows() == want.to_rows()
    assert table.traces()["state"].snapshot().to_rows() == trace.traces()["state"].snapshot().to_rows()

"""Trace: an indexed integrated Z-set; lookups must equal a brute-force filter."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import Future
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.types import BIGINT, DOUBLE, INT, STRING, SqlType, decimal
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

TYPES: list[SqlType] = [INT, STRING]


def rows_of(frame: pl.DataFrame) -> Counter[tuple[Any, ...]]:
    """Consolidated {row: weight} of a c0.., w frame."""
    out: Counter[tuple[Any, ...]] = Counter()
    for r in frame.iter_rows():
        out[tuple(r[:-1])] += int(r[-1])
    return Counter({k: v for k, v in out.items() if v != 0})


def test_insert_lookup_and_cancel() -> None:
    t = Trace(TYPES, (0,))
    t.insert(ZSet.from_rows([(1, "a"), (2, "b"), (None, "n"), (1, "c")], TYPES))
    t.insert(ZSet.from_rows([(1, "a")], TYPES, [-1]))
    found = t.lookup(pl.DataFrame({"k": [1, 3]}), ["k"])
    assert rows_of(found) == Counter({(1, "c"): 1})
    assert len(t.snapshot()) == 3


def test_null_keys_match_null_probes() -> None:
    t = Trace(TYPES, (0,))
    t.insert(ZSet.from_rows([(None, "n"), (1, "x")], TYPES, [2, 1]))
    found = t.lookup(pl.DataFrame({"k": [None]}, schema={"k": pl.Int32}), ["k"])
    assert rows_of(found) == Counter({(None, "n"): 2})


def test_probe_dtype_does_not_matter() -> None:
    t = Trace(TYPES, (0,))
    t.insert(ZSet.from_rows([(7, "x"), (None, "n")], TYPES))
    probe = pl.DataFrame({"k": [7, 2**40]}, schema={"k": pl.Int64})
    # 2**40 does not fit INT: it must match nothing, in particular not the NULL key.
    assert rows_of(t.lookup(probe, ["k"])) == Counter({(7, "x"): 1})


def test_decimal_key_with_other_precision() -> None:
    from decimal import Decimal

    types = [decimal(10, 2), BIGINT]
    t = Trace(types, (0,))
    t.insert(ZSet.from_rows([(Decimal("1.50"), 1), (Decimal("2.00"), 2)], types))
    probe = pl.DataFrame({"k": [Decimal("1.5")]}, schema={"k": pl.Decimal(20, 2)})
    assert rows_of(t.lookup(probe, ["k"])) == Counter({(Decimal("1.50"), 1): 1})


def test_empty_key_returns_everything() -> None:
    t = Trace(TYPES, ())
    t.insert(ZSet.from_rows([(1, "a"), (2, "b")], TYPES))
    assert rows_of(t.lookup(pl.DataFrame({"x": [0]}), [])) == Counter({(1, "a"): 1, (2, "b"): 1})
    assert t.lookup(pl.DataFrame({"x": []}), []).height == 0


def test_runs_merge_geometrically() -> None:
    t = Trace([BIGINT, BIGINT], (0,))
    for i in range(200):
        t.insert(ZSet.from_rows([(i, i)], [BIGINT, BIGINT]))
    assert len(t) == 200
    assert t.run_count <= 6  # O(log n) runs
    found = t.lookup(pl.DataFrame({"k": [5, 150, 999]}), ["k"])
    assert rows_of(found) == Counter({(5, 5): 1, (150, 150): 1})


def test_multi_column_key_and_full_cancel() -> None:
    t = Trace(TYPES, (1, 0))
    z = ZSet.from_rows([(1, "a"), (1, "b")], TYPES)
    t.insert(z)
    t.insert(z.negate())
    assert len(t.snapshot()) == 0
    t.insert(ZSet.from_rows([(1, "a")], TYPES, [3]))
    probe = pl.DataFrame({"s": ["a", "a"], "i": [1, 2]})
    assert rows_of(t.lookup(probe, ["s", "i"])) == Counter({(1, "a"): 3})


def test_merge_cancels_across_runs() -> None:
    for key in [(0,), ()]:
        t = Trace([BIGINT, BIGINT], key)
        t.insert(ZSet.from_rows([(i % 50, i) for i in range(1000)], [BIGINT, BIGINT]))
        # Deletes half the rows and adds to others: merged into the big run at once.
        t.insert(ZSet.from_rows([(i % 50, i) for i in range(0, 1000, 2)], [BIGINT, BIGINT], [-1] * 500))
        t.insert(ZSet.from_rows([(i % 50, i) for i in range(1, 1000, 4)], [BIGINT, BIGINT], [2] * 250))
        expected = {(i % 50, i): (3 if i % 4 == 1 else 1) for i in range(1, 1000, 2)}
        assert dict(rows_of(t.snapshot().frame)) == expected
        assert t.run_count == 1 and len(t) == 500  # merged, cancelled rows gone
        probe = pl.DataFrame({"k": [7]})
        got = t.lookup(probe, ["k"] if key else [])
        want = {r: w for r, w in expected.items() if not key or r[0] == 7}
        assert dict(rows_of(got)) == want


row_st = st.tuples(st.one_of(st.none(), st.integers(0, 4)), st.one_of(st.none(), st.sampled_from("abc")))
batch_st = st.lists(st.tuples(row_st, st.integers(-2, 2).filter(bool)), max_size=8)


@settings(max_examples=50, deadline=None)
@given(
    batches=st.lists(batch_st, min_size=1, max_size=6),
    key=st.sampled_from([(0,), (1,), (0, 1), (1, 0), ()]),
    probes=st.lists(row_st, max_size=4),
)
def test_lookup_matches_brute_force(
    batches: list[list[tuple[tuple[Any, Any], int]]],
    key: tuple[int, ...],
    probes: list[tuple[Any, Any]],
) -> None:
    t = Trace(TYPES, key)
    integrated: Counter[tuple[Any, ...]] = Counter()
    probe = pl.DataFrame(
        {"p0": [p[0] for p in probes], "p1": [p[1] for p in probes]},
        schema={"p0": pl.Int64, "p1": pl.String},
    )
    probe_cols = [f"p{k}" for k in key]
    for batch in batches:
        t.insert(ZSet.from_rows([r for r, _ in batch], TYPES, [w for _, w in batch]))
        for r, w in batch:
            integrated[r] += w
        live = {r: w for r, w in integrated.items() if w != 0}
        probe_keys = {tuple(p[k] for k in key) for p in probes}
        expected = {r: w for r, w in live.items() if tuple(r[k] for k in key) in probe_keys}
        assert dict(rows_of(t.lookup(probe, probe_cols))) == expected
        assert dict(rows_of(t.snapshot().frame)) == live


class _HeldFuture(Future[Any]):
    """A merge that runs when released, or when a step has to wait for it."""

    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        super().__init__()
        self.run = lambda: self.done() or self.set_result(fn(*args))

    def result(self, timeout: float | None = None) -> Any:
        self.run()
        return super().result(timeout)


class _HeldMerger:
    """An executor whose merges run only when the test releases them, so that inserts
    and lookups happen while a merge is under way."""

    def __init__(self) -> None:
        self.held: list[_HeldFuture] = []

    def submit(self, fn: Any, *args: Any) -> _HeldFuture:
        future = _HeldFuture(fn, args)
        self.held.append(future)
        return future

    def release(self) -> None:
        for future in self.held:
            future.run()
        self.held.clear()


def _moves(i: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Step i's change: row i-1 becomes row i (merges must cancel the old one)."""
    return ([(i % 7, i), ((i - 1) % 7, i - 1)], [1, -1]) if i else ([(0, 0)], [1])


def _check_holds(
    t: Trace, live: Counter[tuple[Any, ...]], rows: list[tuple[int, int]], weights: list[int], key: int
) -> None:
    """`live` += the change; then t's contents, and its lookup of `key`, must be live's."""
    for r, w in zip(rows, weights, strict=True):
        live[r] += w
    want = {r: w for r, w in live.items() if w}
    assert dict(rows_of(t.snapshot().frame)) == want
    assert dict(rows_of(t.lookup(pl.DataFrame({"k": [key]}), ["k"]))) == {r: w for r, w in want.items() if r[0] == key}


def test_background_merges_keep_the_contents(monkeypatch: Any) -> None:
    """Merges of 8 rows or more go to the merger; runs stay readable and exact while it
    is held, a finished merge is put in place by the next insert, and the layout
    settles to O(log n) runs."""
    import dbspc.runtime.trace as trace_module

    merger = _HeldMerger()
    monkeypatch.setattr(trace_module, "_BACKGROUND_ROWS", 8)
    monkeypatch.setattr(trace_module, "_MERGER", merger)
    types = [BIGINT, BIGINT]
    t = Trace(types, (0,))
    live: Counter[tuple[Any, ...]] = Counter()
    for i in range(300):
        rows, weights = _moves(i)
        t.insert(ZSet.from_rows(rows, types, weights))
        _check_holds(t, live, rows, weights, i % 7)
        if i % 10 == 9:
            merger.release()
    merger.release()
    t.settle()
    t.insert(ZSet.from_rows([(0, 1000)], types))
    assert t.run_count <= 3 and len(t) == 2


@pytest.mark.parametrize("background_rows", [8, 1 << 16])
def test_merges_owed_by_a_step_are_made_after_it(monkeypatch: Any, background_rows: int) -> None:
    """Inside `merges_owed` a trace's first insert of the step leaves its small merges to
    the idle merger; its runs stay readable and exact while those are held (as are
    large merges, when background_rows is small), a second insert in the step merges
    at once, and `settle_owed` puts the owed merges in place: with no large merge the
    runs are then exactly those of a trace that merged in every step."""
    import dbspc.runtime.trace as trace_module

    idle, merger = _HeldMerger(), _HeldMerger()
    monkeypatch.setattr(trace_module, "_IDLE_MERGER", idle)
    monkeypatch.setattr(trace_module, "_MERGER", merger)
    monkeypatch.setattr(trace_module, "_BACKGROUND_ROWS", background_rows)
    monkeypatch.setattr(trace_module, "_OWED_ROWS", 2)
    types = [BIGINT, BIGINT]
    owed, merged = Trace(types, (0,)), Trace(types, (0,))
    live: Counter[tuple[Any, ...]] = Counter()
    for i in range(200):
        trace_module.settle_owed()
        rows, weights = _moves(i)
        with trace_module.merges_owed():
            owed.insert(ZSet.from_rows(rows, types, weights))
            if i % 9 == 8:  # a second insert in one step: merged now
                owed.insert(ZSet.from_rows([(i % 7, -i)], types))
                owed.insert(ZSet.from_rows([(i % 7, -i)], types, [-1]))
            runs = owed.run_count
        assert owed.run_count == runs  # (nothing put in place behind the step's back)
        merged.insert(ZSet.from_rows(rows, types, weights))
        _check_holds(owed, live, rows, weights, i % 7)
        if i % 10 == 9:
            merger.release()
    assert idle.held, "no merge was owed"
    trace_module.settle_owed()
    assert owed._owed is None
    made = idle.held[-1].result()  # the runs the idle merger made are the ones in place
    assert len(made) <= owed.run_count and all(a is b for a, b in zip(made, owed._runs, strict=False))
    if background_rows > 200:
        assert [list(r.hashes) for r in owed._runs] == [list(r.hashes) for r in merged._runs]
    merger.release()
    owed.settle()
    assert dict(rows_of(owed.snapshot().frame)) == {r: w for r, w in live.items() if w}
    assert owed.run_count <= 3


def test_merges_of_few_rows_are_made_in_the_step(monkeypatch: Any) -> None:
    """Below _OWED_ROWS a merge costs less than handing it to the idle merger: the step
    makes it, and nothing is owed."""
    import dbspc.runtime.trace as trace_module

    idle = _HeldMerger()
    monkeypatch.setattr(trace_module, "_IDLE_MERGER", idle)
    types = [BIGINT, BIGINT]
    t = Trace(types, (0,))
    for i in range(50):
        trace_module.settle_owed()
        rows, weights = _moves(i)
        with trace_module.merges_owed():
            t.insert(ZSet.from_rows(rows, types, weights))
    assert not idle.held and t.run_count <= 3 and len(t) == 1


def test_lookup_is_exact_when_every_hash_collides() -> None:
    """With one hash for every key, candidates are all rows: the equality check must see
    the mismatch and keep only the true (null-safe) matches."""
    with colliding_hashes(1):
        t = Trace(TYPES, (1,))
        t.insert(ZSet.from_rows([(1, "a"), (2, "b"), (3, None), (4, "a")], TYPES))
        t.insert(ZSet.from_rows([(5, "c")], TYPES))
        probe = pl.DataFrame({"s": ["a", None]}, schema={"s": pl.String})
        assert rows_of(t.lookup(probe, ["s"])) == Counter({(1, "a"): 1, (4, "a"): 1, (3, None): 1})


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(batch_st, min_size=1, max_size=8), key=st.sampled_from([(0,), (1,), (0, 1), ()]))
def test_contents_are_exact_when_hashes_collide(batches: list[list[tuple[tuple[Any, Any], int]]], key: Any) -> None:
    """With 2-valued hashes, different rows share both the key and the row hash: runs are
    then built and merged by exact comparison, never by hash alone."""
    with colliding_hashes(2):
        t = Trace(TYPES, key)
        integrated: Counter[tuple[Any, ...]] = Counter()
        for batch in batches:
            t.insert(ZSet.from_rows([r for r, _ in batch], TYPES, [w for _, w in batch]))
            for r, w in batch:
                integrated[r] += w
            assert dict(rows_of(t.snapshot().frame)) == {r: w for r, w in integrated.items() if w}


@pytest.mark.parametrize("key", [(0, 1), (0,), (1,), ()])
@pytest.mark.parametrize("collide", [False, True])
def test_weights_of_rows(collide: bool, key: tuple[int, ...]) -> None:
    """weights_of reads the weight held for exact rows across runs (NULLs included),
    whatever the trace's key (a table's whole-row index, or a join's integral of it);
    when hashes collide it answers None and the caller's exact lookup decides."""
    with colliding_hashes(1 if collide else None):
        t = Trace(TYPES, key)
        t.insert(ZSet.from_rows([(1, "a"), (2, None), (3, "c")], TYPES, [2, 1, 1]))
        t.insert(ZSet.from_rows([(1, "a"), (3, "c"), (4, "d")], TYPES, [1, -1, 1]))
        probe = ZSet.from_rows([(1, "a"), (2, None), (3, "c"), (9, "z"), (4, None)], TYPES).frame
        got = t.weights_of(probe)
        if collide:
            assert got is None
        else:
            assert got is not None and got.tolist() == [3, 1, 0, 0, 0]


def assert_same_answers(back: Trace, t: Trace) -> None:
    """A trace restored from `t`'s runs holds and answers the same, before and after one
    more change to both (traces of (INT, STRING) rows as the restore tests make them)."""
    types = (INT, STRING)
    assert back.snapshot().to_rows() == t.snapshot().to_rows()
    probe = pl.DataFrame({"c0": [3, 5]}, schema={"c0": pl.Int32})
    if t.key == (0,):
        assert sorted(back.lookup(probe, ["c0"]).rows()) == sorted(t.lookup(probe, ["c0"]).rows())
    back.insert(ZSet.from_rows([(3, "s3")], types, [-1]))
    t.insert(ZSet.from_rows([(3, "s3")], types, [-1]))
    assert back.snapshot().to_rows() == t.snapshot().to_rows()


@pytest.mark.parametrize("key", [(0,), (0, 1), ()])
def test_saved_runs_carry_their_hashes(key: tuple[int, ...], monkeypatch: Any) -> None:
    """saved_run writes a run's hashes beside its rows; restore_runs adopts them after
    hashing only a sample of rows again, and hashes everything when the saved hashes are
    not this trace's (another hash function, say) or absent (an older checkpoint)."""
    import dbspc.runtime.trace as trace_module
    from dbspc.runtime import zset as zset_module

    types = (INT, STRING)
    t = Trace(types, key)
    for i in range(4):
        t.insert(ZSet.from_rows([(k % 7, f"s{k}") for k in range(i * 300, i * 300 + 290 + i)], types))
    t.settle()
    saved = [t.saved_run(f) for f in t.runs()]
    assert all(f.width == t.runs()[0].width + (1 if key in [(0, 1), ()] else 2) for f in saved)
    hashed: list[int] = []
    real = zset_module.hash_rows

    def counting(columns: Any, *a: Any, **kw: Any) -> Any:
        hashed.append(len(columns[0]) if columns else 0)
        return real(columns, *a, **kw)

    monkeypatch.setattr(trace_module, "hash_rows", counting)
    back = Trace(types, key)
    assert back.restore_runs(saved)
    assert max(hashed) <= trace_module._HASH_SAMPLE  # a sample hashed again, not the runs
    assert_same_answers(back, t)
    # hashes that are not this trace's: every row hashed again, the same contents
    foreign = [f.with_columns(pl.col(c) ^ 1 for c in f.columns if c.startswith("__")) for f in saved]
    for frames in (foreign, t.runs()):
        hashed.clear()
        again = Trace(types, key)
        if again.restore_runs(frames):
            assert max(hashed) > trace_module._HASH_SAMPLE
        else:  # (the runs' order differs from another hash's order: refused, and empty)
            assert len(again) == 0


num_row_st = st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 3)))


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(
        st.lists(st.tuples(num_row_st, st.integers(-2, 2).filter(bool)), max_size=12), min_size=1, max_size=5
    ),
    key=st.sampled_from([(0,), (1,), (0, 1), ()]),
    probes=st.lists(num_row_st, max_size=8, unique=True),
    collide=st.sampled_from([None, 2]),
)
def test_weights_of_are_the_integrated_weights(
    batches: list[list[tuple[tuple[Any, Any], int]]],
    key: tuple[int, ...],
    probes: list[tuple[Any, Any]],
    collide: int | None,
) -> None:
    """Against a dict: many rows per key (the pair probe searches among a key's rows),
    rows spread over runs, and hashes reduced to two values (then None, or exact)."""
    types = (INT, INT)
    with colliding_hashes(collide):
        t = Trace(types, key)
        held: dict[tuple[Any, Any], int] = {}
        for batch in batches:
            for row, w in batch:
                held[row] = held.get(row, 0) + w
            if batch:
                t.insert(ZSet.from_rows([r for r, _ in batch], types, [w for _, w in batch]))
        got = t.weights_of(ZSet.from_rows(probes, types).frame)
        if collide is None:
            assert got is not None
        if got is not None:
            assert got.tolist() == [held.get(r, 0) for r in probes]


@pytest.mark.parametrize("key", [(0,), (0, 1, 2)])
@pytest.mark.parametrize("differs", [1, 2])
def test_weights_of_compares_the_rows_found_in_every_run(key: tuple[int, ...], differs: int) -> None:
    """With every hash equal, each run holds a row that differs from the probe's only in
    an INT (differs=1) or a DECIMAL column (2), compared once for all runs: the answer
    is None (the caller's exact lookup decides), never another row's weight."""
    types = (INT, INT, decimal(10, 2))
    probe = ZSet.from_rows([(1, 5, Decimal("1.25"))], types).frame
    with colliding_hashes(1):
        t = Trace(types, key)
        for other, filler in ((6, 9), (7, 0)):  # 10 rows, then 1: two runs (no merge)
            row = (1, other, Decimal("1.25")) if differs == 1 else (1, 5, Decimal(other))
            t.insert(ZSet.from_rows([row] + [(10 + i, 0, Decimal(0)) for i in range(filler)], types))
        assert t.run_count == 2
        assert t.weights_of(probe) is None
        t.insert(ZSet.from_rows([(1, 5, Decimal("1.25"))], types, [3]))
        got = t.weights_of(probe)
        assert got is None or got.tolist() == [3]


def test_delete_checks_are_exact_when_hashes_collide() -> None:
    """A table's delete check reads weights through weights_of; with every hash equal it
    falls back to the exact lookup, and still accepts present rows and refuses others."""
    from dbspc.compiler.errors import InputError
    from dbspc.runtime.pipeline import Pipeline

    with colliding_hashes(1):
        p = Pipeline.from_sql("CREATE TABLE t (a INT, b STRING); CREATE VIEW v AS SELECT a FROM t;")
        p.step({"t": ZSet.from_rows([(1, "x"), (2, None)], TYPES)})
        with pytest.raises(InputError, match=r"cannot delete 1 row\(s\) from table 't'.*a=1, b='y'"):
            p.step({"t": ZSet.from_rows([(1, "y"), (2, None)], TYPES, [-1, -1])})
        out = p.step({"t": ZSet.from_rows([(1, "x"), (2, None)], TYPES, [-1, -1])})
        assert dict(rows_of(out["v"].frame)) == {(1,): -1, (2,): -1}


@pytest.mark.parametrize("key", [(0,), (0, 1), ()])
def test_saved_runs_are_adopted_as_they_are(key: tuple[int, ...]) -> None:
    """restore_runs(runs()) gives the same runs and answers, with no sort or merge; a
    frame not in run order is refused and the trace left empty."""
    types = (INT, STRING)
    t = Trace(types, key)
    for i in range(6):
        t.insert(ZSet.from_rows([(k % 7, f"s{k}") for k in range(i * 50, i * 50 + 40 + i)], types))
    t.settle()
    back = Trace(types, key)
    assert back.restore_runs(t.runs())
    assert [f.height for f in back.runs()] == [f.height for f in t.runs()]
    assert_same_answers(back, t)
    shuffled = [f.reverse() for f in t.runs()]
    fresh = Trace(types, key)
    assert not fresh.restore_runs(shuffled) and len(fresh) == 0


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(
        st.lists(st.tuples(num_row_st, st.integers(-2, 2).filter(bool)), max_size=8), min_size=1, max_size=5
    ),
    key=st.sampled_from([(0,), (1,), (0, 1)]),
    probes=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 4)), max_size=5),
    collide=st.sampled_from([None, 1, 2]),
)
def test_matched_columns_are_the_columns_of_matches(
    batches: list[list[tuple[tuple[Any, Any], int]]],
    key: tuple[int, ...],
    probes: list[tuple[int, int]],
    collide: int | None,
) -> None:
    """matched_columns gives the pairs of `matches` (the same probe positions, with the
    stored rows' columns), checking keys in numpy against the runs in place; a NULL key
    stored, or keys that only share a hash, are still exact or answered None."""
    types: list[SqlType] = [BIGINT, BIGINT]
    probe = pl.DataFrame(
        {"p0": [p[0] for p in probes], "p1": [p[1] for p in probes]}, schema={"p0": pl.Int64, "p1": pl.Int64}
    )
    names = [f"p{k}" for k in key]
    with colliding_hashes(collide):
        t = Trace(types, key)
        for batch in batches:
            t.insert(ZSet.from_rows([r for r, _ in batch], types, [w for _, w in batch]))
            got = t.matched_columns(probe, names, ["c0", "w"])
            want = t.matches(probe, names)
            if got is None:
                assert collide is not None  # only a shared hash sends the caller to lookup
                continue
            assert want is not None
            positions, columns = got
            pairs = Counter(zip(positions.tolist(), *(c.tolist() for c in columns), strict=True))
            frame = want[1]
            expected = Counter(
                zip(want[0].tolist(), *(frame.get_column(c).to_list() for c in ["c0", "w"]), strict=True)
            )
            assert pairs == expected


plain_row_st = st.tuples(st.integers(0, 5), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf")]))


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(
        st.lists(st.tuples(plain_row_st, st.integers(-2, 2).filter(bool)), max_size=10), min_size=1, max_size=5
    ),
    key=st.sampled_from([(0,), (1,), (1, 0)]),
    probes=st.lists(plain_row_st, max_size=6),
    collide=st.sampled_from([None, 1, 3]),
)
def test_matches_of_plain_numbers_gather_in_one_compiled_call(
    batches: list[list[tuple[tuple[Any, Any], int]]],
    key: tuple[int, ...],
    probes: list[tuple[int, float]],
    collide: int | None,
) -> None:
    """A trace of plain numbers answers `matches` by spine.gather_matches: every stored row
    whose key equals a probe's (NaN = NaN, -0.0 = 0.0), once per run that holds it, a
    repeated probe key pairing again. With shared hashes it answers None (keys that only
    share a hash) or the exact pairs, never a pair of unequal keys."""
    import dbspc.runtime.trace as trace_module

    types: list[SqlType] = [INT, DOUBLE]
    calls: list[int] = []
    gather = trace_module.spine.gather_matches
    probe = pl.DataFrame(
        {"p0": [p[0] for p in probes], "p1": [p[1] for p in probes]}, schema={"p0": pl.Int64, "p1": pl.Float64}
    )

    def norm(x: Any) -> Any:
        return "NaN" if x != x else 0.0 if x == 0 else x  # (one NaN, and -0.0 is 0.0)

    live: Counter[tuple[Any, ...]] = Counter()
    with colliding_hashes(collide), pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace_module.spine, "gather_matches", lambda *a: calls.append(1) or gather(*a))
        t = Trace(types, key)
        for batch in batches:
            rows = [r for r, _ in batch]
            t.insert(ZSet.from_rows(rows, types, [w for _, w in batch]))
            for r, w in batch:
                live[(r[0], norm(r[1]))] += w
            calls.clear()
            got = t.matches(probe, [f"p{k}" for k in key])
            if not t.run_count or not probes:
                continue
            assert calls, "plain numbers gather in the compiled kernel"
            if got is None:
                assert collide is not None  # only keys that share a hash send the caller to lookup
                continue
            positions, frame = got
            pairs: Counter[tuple[Any, ...]] = Counter()
            for at, (c0, c1, w) in zip(positions.tolist(), frame.iter_rows(), strict=True):
                pairs[(at, c0, norm(c1))] += w
            want: Counter[tuple[Any, ...]] = Counter()
            for at, p in enumerate(probes):
                for r, w in live.items():
                    if w and all(norm(r[k]) == norm(p[k]) for k in key):
                        want[(at, *r)] += w
            assert {k: v for k, v in pairs.items() if v} == {k: v for k, v in want.items() if v}


def test_a_large_probe_of_plain_numbers_sorts_in_polars_and_gathers_alike(monkeypatch: Any) -> None:
    """Past _PARALLEL_SORT_ROWS the probe's hashes sort in polars, whose order is of its
    index type: the compiled gather takes it as int64 all the same."""
    import dbspc.runtime.zset as zset_module

    types: list[SqlType] = [BIGINT, BIGINT]
    t = Trace(types, (0,))
    t.insert(ZSet.from_rows([(i % 7, i) for i in range(50)], types))
    probe = pl.DataFrame({"k": [3, 5, 3, 9]})
    want = t.matches(probe, ["k"])
    monkeypatch.setattr(zset_module, "_PARALLEL_SORT_ROWS", 2)
    got = t.matches(probe, ["k"])
    assert want is not None and got is not None
    assert sorted(zip(got[0].tolist(), got[1].rows(), strict=True)) == sorted(
        zip(want[0].tolist(), want[1].rows(), strict=True)
    )
    assert len(got[0]) == 2 * 7 + 7


def test_matched_columns_of_string_keys_go_through_matches() -> None:
    t = Trace(TYPES, (1,))
    t.insert(ZSet.from_rows([(1, "a"), (2, "b")], TYPES))
    t.insert(ZSet.from_rows([(3, "a")], TYPES, [2]))
    got = t.matched_columns(pl.DataFrame({"s": ["a", "z"]}), ["s"], ["c0", "w"])
    assert got is not None
    positions, (ids, weights) = got
    assert sorted(zip(positions.tolist(), ids.tolist(), weights.tolist(), strict=True)) == [(0, 1, 1), (0, 3, 2)]


@pytest.mark.parametrize("key", [(0, 1, 2), (1,), ()])
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-3, 3)),
            st.one_of(st.none(), st.sampled_from(["", "a", "b", "日本"])),
            st.one_of(st.none(), st.decimals(-2, 2, places=2)),
        ),
        min_size=1,
        max_size=12,
    ),
    weights=st.lists(st.integers(-2, 2), min_size=12, max_size=12),
)
@settings(max_examples=40, deadline=None)
def test_a_trace_reads_a_consolidated_change_hashes_as_its_own(
    key: tuple[int, ...], rows: list[tuple[Any, ...]], weights: list[int]
) -> None:
    """A consolidated ZSet keeps the row hashes its consolidation computed; a trace
    inserting or checking it reads them for its row hash (and its key hash when keyed by
    the whole row) instead of hashing again. They are the hashes it would compute: the
    runs and the weights found are those of the same rows without them."""
    types: list[SqlType] = [INT, STRING, decimal(4, 2)]
    change = ZSet.from_rows(rows, types, weights[: len(rows)]).consolidate()
    plain = ZSet(change.frame, change.types, True)
    assert change.hashes is not None and plain.hashes is None
    with_known, without = Trace(types, key), Trace(types, key)
    with_known.insert(change)
    without.insert(plain)
    assert [(list(r.hashes), list(r.row_hashes)) for r in with_known._runs] == [
        (list(r.hashes), list(r.row_hashes)) for r in without._runs
    ]
    assert rows_of(with_known.snapshot().frame) == rows_of(without.snapshot().frame)
    a, b = without.weights_of(change.frame, change.hashes), without.weights_of(change.frame)
    assert (a is None and b is None) or (a is not None and b is not None and list(a) == list(b))


_fixed_row = st.tuples(
    st.integers(0, 3),
    st.integers(-(2**40), 2**40),
    st.decimals(-999, 999, places=2, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.5, float("nan")]),
)


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(
        st.lists(st.tuples(_fixed_row, st.integers(-2, 2).filter(bool)), max_size=12), min_size=2, max_size=8
    ),
    key=st.sampled_from([(0,), (1, 2), ()]),
)
def test_merges_in_one_compiled_pass_keep_the_contents(
    batches: list[list[tuple[tuple[Any, ...], int]]], key: tuple[int, ...]
) -> None:
    """Runs of fixed-width columns without NULLs (BIGINT, DECIMAL, DOUBLE) merge in one
    compiled pass (`spine.merge_rows`); a pair it cannot compare as bytes (-0.0 and 0.0,
    NaNs) goes through the exact merge. Either way the contents are the sum of the batches,
    as rows_equal counts them (-0.0 = 0.0, NaN = NaN)."""
    import dbspc.runtime.trace as trace_module

    types = [BIGINT, BIGINT, decimal(10, 2), DOUBLE]
    tries: list[bool] = []
    one_pass = Trace._merged_in_one_pass

    def counted(self: Trace, old: Any, new: Any) -> Any:
        merged = one_pass(self, old, new)
        tries.append(merged is not False)
        return merged

    with pytest.MonkeyPatch.context() as m:
        m.setattr(trace_module, "_MERGE_FACTOR", 1 << 20)  # every insert merges
        m.setattr(Trace, "_merged_in_one_pass", counted)
        t = Trace(types, key)
        want: Counter[tuple[Any, ...]] = Counter()
        for batch in batches:
            if batch:
                t.insert(ZSet.from_rows([r for r, _ in batch], types, [w for _, w in batch]))
            for (a, b, d, x), w in batch:
                want[(a, b, d, "nan" if x != x else x + 0.0)] += w
        got: Counter[tuple[Any, ...]] = Counter()
        for (a, b, d, x), w in rows_of(t.snapshot().frame).items():
            got[(a, b, d, "nan" if x != x else x + 0.0)] += w
    assert +got == +want
    assert t.run_count <= 1
    if all(x == 1.5 for b in batches for (_, _, _, x), _ in b):
        assert all(tries)  # (every value comparable as bytes: the compiled pass merged)


def test_a_merged_runs_decimal_views_are_its_own_buffers() -> None:
    """The compiled merge hands its DECIMAL slots to polars without a copy, and the run
    reads them back as the same memory (what the delete checks' probes compare)."""
    types = [BIGINT, decimal(10, 2)]
    t = Trace(types, (0,))
    t.insert(ZSet.from_rows([(i, Decimal(i) / 4) for i in range(100)], types))
    t.insert(ZSet.from_rows([(i, Decimal(i) / 4) for i in range(0, 100, 3)], types, [-1] * 34))
    assert t.run_count == 1
    run = t._runs[0]
    words = run.comparable("c1")
    assert words is not None and words.shape == (66, 2)
    from dbspc.runtime.zset import decimal_words

    fresh = decimal_words(run.frame.get_column("c1"))
    assert fresh is not None and np.shares_memory(fresh[0], words) and np.array_equal(fresh[0], words)
    assert dict(rows_of(t.snapshot().frame)) == {(i, Decimal(i) / 4): 1 for i in range(100) if i % 3}

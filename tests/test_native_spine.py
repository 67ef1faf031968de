"""The compiled spine kernels (runtime/native/spine.pyx) against numpy references, on
random hashes with many repeats (so equal pairs, runs of equal keys and the bucketed
sort's boundaries all occur)."""

from __future__ import annotations

import numpy as np
import pytest

from dbspc.runtime.native import spine
from dbspc.runtime.zset import argsort_hashes


def _hashes(rng: np.random.Generator, n: int, distinct: int) -> np.ndarray:
    # spread over the whole 64 bits: the sort buckets by the top bits
    return rng.integers(0, distinct, n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)


# keys: how many distinct key hashes, as a share of n. Few rows a key take the single
# insertion pass over the buckets; a key of thousands of rows, a sort of its bucket.
@pytest.mark.parametrize("keys", [1 / 3, 1.0, 0.01])
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 5000, 300_000])
def test_sort_groups_is_the_lexicographic_order(n: int, keys: float) -> None:
    rng = np.random.default_rng(n)
    kh, rh = _hashes(rng, n, max(1, int(n * keys))), _hashes(rng, n, 3)
    if keys == 1.0:
        kh = rng.integers(0, 1 << 64, n, dtype=np.uint64)  # every key hash distinct (almost surely)
    order, starts = spine.sort_groups(kh, rh)
    want = np.lexsort((np.arange(n), rh, kh))
    assert np.array_equal(order, want)
    pairs = list(zip(kh[want].tolist(), rh[want].tolist(), strict=True))
    assert starts.tolist() == [i for i in range(n) if i == 0 or pairs[i] != pairs[i - 1]]
    by_hash = argsort_hashes(kh)  # (below 50,000 rows the run sort: equal hashes by row number)
    assert np.array_equal(kh[by_hash], np.sort(kh)) and np.array_equal(np.sort(by_hash), np.arange(n))
    if n < 50_000:
        assert np.array_equal(by_hash, np.argsort(kh, kind="stable"))


# distinct: how many hash values the two sides draw from. Few make long chains and
# many pairs; many make a sparse table where most probes find nothing.
@pytest.mark.parametrize("distinct", [1, 5, 1000])
@pytest.mark.parametrize(("n", "m"), [(0, 10), (10, 0), (1, 1), (300, 7), (7, 300), (500, 400)])
def test_match_hashes_pairs_every_equal_hash_in_row_order(n: int, m: int, distinct: int) -> None:
    rng = np.random.default_rng(n * 7 + m)
    left, right = _hashes(rng, n, distinct), _hashes(rng, m, distinct)
    li, ri = spine.match_hashes(left, right)
    want = [(i, j) for i in range(n) for j in range(m) if left[i] == right[j]]
    assert list(zip(li.tolist(), ri.tolist(), strict=True)) == want
    assert li.dtype == ri.dtype == np.int64


def _run(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct (kh, rh) pairs, as a consolidated run holds them."""
    kh, rh = _hashes(rng, n, 40), _hashes(rng, n, 4)
    pairs = sorted(set(zip(kh.tolist(), rh.tolist(), strict=True)))
    return np.array([p[0] for p in pairs], np.uint64), np.array([p[1] for p in pairs], np.uint64)


@pytest.mark.parametrize("seed", range(20))
def test_merge_plan_interleaves_and_pairs_equal_hashes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    (akh, arh), (bkh, brh) = _run(rng, int(rng.integers(0, 60))), _run(rng, int(rng.integers(0, 60)))
    take, pa, pb, slot, simple = spine.merge_plan(akh, arh, bkh, brh)
    assert simple
    kh, rh = np.concatenate([akh, bkh]), np.concatenate([arh, brh])
    a_pairs = set(zip(akh.tolist(), arh.tolist(), strict=True))
    b_pairs = set(zip(bkh.tolist(), brh.tolist(), strict=True))
    merged = list(zip(kh[take].tolist(), rh[take].tolist(), strict=True))
    assert merged == sorted(a_pairs | b_pairs)  # each pair once, in order
    assert {(int(akh[i]), int(arh[i])) for i in pa} == a_pairs & b_pairs
    assert np.array_equal(akh[pa], bkh[pb]) and np.array_equal(arh[pa], brh[pb])
    assert np.array_equal(take[slot], pa)


def test_merge_plan_reports_a_pair_repeated_inside_a_run() -> None:
    """Two different rows with both hashes equal (a collision) in one run: not simple."""
    a = np.array([1, 5, 5], np.uint64), np.array([0, 2, 2], np.uint64)
    b = np.array([5], np.uint64), np.array([2], np.uint64)
    assert spine.merge_plan(*a, *b)[4] is False


@pytest.mark.parametrize("seed", range(10))
def test_fenced_probes_find_every_position_of_the_wanted_hashes(seed: int) -> None:
    """Runs of every size around the fence step, with hashes repeated across blocks."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, spine.FENCE_STEP - 1, spine.FENCE_STEP, spine.FENCE_STEP + 1, int(rng.integers(0, 5000))]
    runs = [np.sort(_hashes(rng, n, int(rng.integers(1, 400)))) for n in sizes]
    wanted = np.unique(_hashes(rng, 80, 500))
    found = spine.probe_fenced(runs, [spine.fences(r) for r in runs], wanted)
    for run, got in zip(runs, found, strict=True):
        assert np.array_equal(got, np.flatnonzero(np.isin(run, wanted)))


@pytest.mark.parametrize("wanted_count", [1, 3, 40, 2000])
def test_probes_find_their_blocks_whether_few_or_many_ask(wanted_count: int) -> None:
    """A run of 100k hashes: a few probes gallop over its fences, many walk them in
    order (one probe per 64 fences or closer); both find the same positions."""
    rng = np.random.default_rng(wanted_count)
    run = np.sort(_hashes(rng, 100_000, 1 << 40))
    wanted = np.unique(np.concatenate([rng.choice(run, wanted_count), _hashes(rng, wanted_count, 1 << 40)]))
    (got,) = spine.probe_fenced([run], [spine.fences(run)], wanted)
    assert np.array_equal(got, np.flatnonzero(np.isin(run, wanted)))
    rows = _hashes(rng, len(run), 1 << 40)
    (pairs,) = spine.probe_pairs([run], [rows], [spine.fences(run)], run[got], rows[got])
    assert np.array_equal(pairs[0], np.arange(len(got))) and np.array_equal(pairs[1], got)


@pytest.mark.parametrize("seed", range(10))
def test_pair_probes_find_each_wanted_pair_where_a_run_holds_it(seed: int) -> None:
    """Runs of distinct (key hash, row hash) pairs, with keys of one row and keys of
    hundreds (spanning fence blocks), against a set lookup."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, spine.FENCE_STEP - 1, spine.FENCE_STEP + 1, int(rng.integers(0, 5000))]
    runs = []
    for n in sizes:
        kh, rh = _hashes(rng, n, int(rng.integers(1, 40))), _hashes(rng, n, 3000)
        order, starts = spine.sort_groups(kh, rh)
        runs.append((kh[order][starts], rh[order][starts]))  # one row per pair, as a run holds
    kh, rh = _hashes(rng, 300, 40), _hashes(rng, 300, 3000)
    order, starts = spine.sort_groups(kh, rh)
    wkh, wrh = kh[order][starts], rh[order][starts]
    found = spine.probe_pairs([k for k, _ in runs], [r for _, r in runs], [spine.fences(k) for k, _ in runs], wkh, wrh)
    for (k, r), (wanted, at) in zip(runs, found, strict=True):
        held = {(a, b): i for i, (a, b) in enumerate(zip(k.tolist(), r.tolist(), strict=True))}
        want = [(q, held[p]) for q, p in enumerate(zip(wkh.tolist(), wrh.tolist(), strict=True)) if p in held]
        assert list(zip(wanted.tolist(), at.tolist(), strict=True)) == want


def test_pair_probes_of_one_key_in_a_small_run() -> None:
    """Many wanted rows of one key, against a run holding two of them: the first pass
    finds the key for every wanted pair (more entries than the run has rows), the second
    keeps the rows it holds."""
    kh = np.full(2, 7, dtype=np.uint64)
    rh = np.array([5, 9], dtype=np.uint64)
    wkh = np.full(200, 7, dtype=np.uint64)
    wrh = np.arange(200, dtype=np.uint64)
    ((wanted, at),) = spine.probe_pairs([kh], [rh], [spine.fences(kh)], wkh, wrh)
    assert wanted.tolist() == [5, 9] and at.tolist() == [0, 1]


def test_large_runs_are_ordered_as_the_compiled_sort_orders_them() -> None:
    """Above _PARALLEL_GROUP_ROWS rows the hashes are sorted with polars: the same order and groups."""
    from dbspc.runtime.zset import _PARALLEL_GROUP_ROWS, hash_groups

    rng = np.random.default_rng(3)
    n = _PARALLEL_GROUP_ROWS + 5
    kh, rh = _hashes(rng, n, n // 4), _hashes(rng, n, 2)
    order, starts = hash_groups(kh, rh)
    want_order, want_starts = spine.sort_groups(kh, rh)
    # within a group of equal pairs any order will do
    assert np.array_equal(kh[order], kh[want_order]) and np.array_equal(rh[order], rh[want_order])
    assert np.array_equal(starts, want_starts)
    order, starts = hash_groups(kh)  # by the key hash alone
    want_order, want_starts = spine.sort_groups(kh, kh)
    assert np.array_equal(kh[order], kh[want_order]) and np.array_equal(starts, want_starts)


@pytest.mark.parametrize("seed", range(5))
def test_held_weights_sum_each_rows_weight_over_the_runs(seed: int) -> None:
    """Runs of rows (an int64 and a 16-byte column) with their weights; probe rows some
    held in one or more runs, some in none: each gets the sum of its weights, as a dict
    says; a row whose hashes match but whose bytes differ gives None."""
    rng = np.random.default_rng(seed)
    universe = rng.integers(0, 1 << 40, (400, 3)).astype(np.int64)  # value, then two decimal words
    kh_of = (universe[:, 0] % 37).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # keys of many rows
    rh_of = universe[:, 1].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    held: dict[int, int] = {}
    runs = []
    for size in (int(rng.integers(1, 300)), spine.FENCE_STEP + 3, 5):
        rows = rng.choice(len(universe), size, replace=False)
        order, _ = spine.sort_groups(kh_of[rows], rh_of[rows])
        rows = rows[order]
        weights = rng.integers(-3, 4, size).astype(np.int64)
        for r, w in zip(rows.tolist(), weights.tolist(), strict=True):
            held[r] = held.get(r, 0) + w
        columns = [_bytes(universe[rows, :1]), _bytes(universe[rows, 1:])]
        runs.append((kh_of[rows], rh_of[rows], spine.fences(kh_of[rows]), columns, weights))
    probe = rng.choice(len(universe), 120, replace=False)
    order, _ = spine.sort_groups(kh_of[probe], rh_of[probe])
    args = [[r[i] for r in runs] for i in range(5)]
    wanted = (kh_of[probe][order], rh_of[probe][order], order)
    got = spine.held_weights(*args, *wanted, [_bytes(universe[probe, :1]), _bytes(universe[probe, 1:])])
    assert got is not None and got.tolist() == [held.get(r, 0) for r in probe.tolist()]
    changed = universe[probe, 1:].copy()
    changed[:, 1] += 1  # the same hashes, other bytes
    assert spine.held_weights(*args, *wanted, [_bytes(universe[probe, :1]), _bytes(changed)]) is None


def _bytes(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)


@pytest.mark.parametrize("one_hash", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_merge_rows_is_merge_plan_with_rows_gathered_and_weights_added(seed: int, one_hash: bool) -> None:
    """Two runs of rows (8-, 4-, 16- and 3-byte columns: each copy loop of the gather),
    some rows in both: the merged run is merge_plan's order with each row's columns,
    the weights of a row in both added, and rows whose weights cancel left out."""
    rng = np.random.default_rng(seed)
    universe = rng.integers(0, 1 << 40, (300, 4)).astype(np.int64)
    kh_of = (universe[:, 0] % 23).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    rh_of = kh_of if one_hash else universe[:, 1].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    if one_hash:
        universe[:, 0] = np.arange(300)  # (the key hash is then the row's own)
        kh_of = rh_of = universe[:, 0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)

    def columns(rows: np.ndarray) -> list[np.ndarray]:
        v = universe[rows]
        return [_bytes(v[:, 0]), _bytes(v[:, 1].astype(np.int32)), _bytes(v[:, 2:4]), _bytes(v[:, :1])[:, :3].copy()]

    runs = []
    for size in (int(rng.integers(0, 200)), int(rng.integers(0, 60))):
        rows = rng.choice(300, size, replace=False)
        rows = rows[np.lexsort((rh_of[rows], kh_of[rows]))]
        weights = rng.choice([-2, -1, 1, 2], size).astype(np.int64)
        runs.append((rows, weights))
    (ra, wa), (rb, wb) = runs
    both = np.intersect1d(ra, rb)
    wb[np.isin(rb, both[::2])] = -wa[np.isin(ra, both[::2])]  # (ra, rb sorted alike) half of them cancel
    got = spine.merge_rows(kh_of[ra], rh_of[ra], kh_of[rb], rh_of[rb], columns(ra), columns(rb), wa, wb, one_hash)
    assert got is not None
    kh, rh, cols, w = got
    held: dict[int, int] = {}
    for r, x in [*zip(ra.tolist(), wa.tolist(), strict=True), *zip(rb.tolist(), wb.tolist(), strict=True)]:
        held[r] = held.get(r, 0) + x
    want = np.array(sorted((r for r, x in held.items() if x), key=lambda r: (kh_of[r], rh_of[r])), dtype=np.int64)
    assert np.array_equal(kh, kh_of[want]) and np.array_equal(rh, rh_of[want])
    assert (rh is kh) == one_hash
    assert w.tolist() == [held[r] for r in want.tolist()]
    for got_column, want_column in zip(cols, columns(want), strict=True):
        assert np.array_equal(got_column, want_column)


def test_merge_rows_leaves_collisions_and_unequal_bytes_to_the_exact_merge() -> None:
    """Two rows sharing both hashes inside a run, or a pair whose hashes match but whose
    bytes differ (as -0.0 and 0.0 do): None."""
    value = _bytes(np.array([7, 8, 8], np.int64))
    a = np.array([1, 5, 5], np.uint64), np.array([0, 2, 2], np.uint64)
    b = np.array([5], np.uint64), np.array([2], np.uint64)
    ones = np.ones(3, np.int64)
    assert spine.merge_rows(*a, *b, [value], [value[1:2]], ones, ones[:1], False) is None
    zeros = _bytes(np.array([0.0], np.float64)), _bytes(np.array([-0.0], np.float64))
    one = np.array([3], np.uint64), np.array([4], np.uint64)
    assert spine.merge_rows(*one, *one, [zeros[0]], [zeros[1]], ones[:1], -ones[:1], False) is None
    kh, _, cols, w = spine.merge_rows(*one, *one, [zeros[0]], [zeros[0]], ones[:1], -ones[:1], False)
    assert len(kh) == len(w) == len(cols[0]) == 0  # cancelled

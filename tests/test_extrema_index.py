"""The ordered MIN/MAX index (runtime/native/extrema.h, runtime/kernels/extrema_index.py)
against a brute force: random changes that insert and delete, groups of a few values
and of thousands (so blocks split, empty and are walked across), with hashes as they are
and colliding."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from decimal import Decimal

import numpy as np
import polars as pl
import pytest

from dbspc.compiler.types import BIGINT, BOOLEAN, DATE, INT, STRING, TIMESTAMP, decimal
from dbspc.runtime.kernels.extrema_index import ExtremaIndex
from dbspc.runtime.native import extrema
from tests.collisions import colliding_hashes


@pytest.mark.parametrize("collide", [None, 2])
@pytest.mark.parametrize(("groups", "spread"), [(6, 12), (2, 5000)])
def test_extremes_and_counts_equal_a_brute_force(groups: int, spread: int, collide: int | None) -> None:
    rng = np.random.default_rng(groups * spread)
    index = extrema.Index(2)
    held: defaultdict[tuple[int, int], Counter[int]] = defaultdict(Counter)
    want = np.array([[g, g % 2] for g in range(groups + 1)], dtype=np.int64)  # the last: never seen
    with colliding_hashes(collide):
        for _ in range(150):
            n = int(rng.integers(0, 400))
            g = rng.integers(0, groups, n)
            keys = np.stack([g, g % 2], axis=1).astype(np.int64)
            values = rng.integers(-spread, spread, n).astype(np.int64)
            weights = np.ones(n, dtype=np.int64)
            taken: Counter[tuple[tuple[int, int], int]] = Counter()
            for x in range(n):  # about half the rows delete a value held, never more than held
                k = (int(g[x]), int(g[x]) % 2)
                present = [v for v, c in held[k].items() if c - taken[(k, v)] > 0]
                if present and rng.random() < 0.5:
                    values[x] = present[int(rng.integers(len(present)))]
                    weights[x] = -1
                    taken[(k, int(values[x]))] += 1
            after = defaultdict(Counter, {k: Counter(c) for k, c in held.items()})
            for x in range(n):
                after[(int(g[x]), int(g[x]) % 2)][int(values[x])] += int(weights[x])
            order = rng.permutation(n)  # a row's insert and delete in either order
            has, lo, hi = index.extremes(want, keys[order], values[order], weights[order])
            for t, (a, b) in enumerate(want.tolist()):
                live = [v for v, c in after[(a, b)].items() if c > 0]
                assert bool(has[t]) == bool(live)
                if live:
                    assert (lo[t], hi[t]) == (min(live), max(live))
            assert index.apply(keys[order], values[order], weights[order])
            held = after
        assert len(index) == sum(1 for c in held.values() for v in c.values() if v > 0)
    # deleting a value that is not there is refused
    assert not index.apply(np.array([[groups, 0]], dtype=np.int64), np.array([1], np.int64), np.array([-1], np.int64))


DEC = pl.Decimal(18, 3)


def test_values_and_keys_keep_their_types_order_and_nulls() -> None:
    cases = [
        (INT, pl.Series([3, -7, 12], dtype=pl.Int32)),
        (BIGINT, pl.Series([2**40, -(2**50), 0], dtype=pl.Int64)),
        (decimal(18, 3), pl.Series([Decimal("-999999999999999.999"), Decimal("0.001"), Decimal("5")], dtype=DEC)),
        (DATE, pl.Series([dt.date(1969, 12, 31), dt.date(2024, 2, 29), dt.date(1, 1, 1)])),
        (TIMESTAMP, pl.Series([dt.datetime(2020, 1, 1, 0, 0, 0, 1), dt.datetime(1900, 5, 5), dt.datetime(2038, 1, 1)])),
        (BOOLEAN, pl.Series([True, False, True])),
    ]
    for t, column in cases:
        index = ExtremaIndex([STRING], t)
        images = index.values(column)
        assert images is not None
        assert np.array_equal(np.argsort(images, kind="stable"), column.arg_sort().to_numpy())
        present = np.array([True, False, True])
        back = index.series("x", images, present)
        assert back.dtype == column.dtype
        assert back.to_list() == [column[0], None, column[2]]
    index = ExtremaIndex([STRING, INT], INT)
    keys = index.keys([pl.Series(["a", None, "", "a"]), pl.Series([None, 0, 0, None], dtype=pl.Int32)], 4)
    assert keys is not None
    # NULL, '' and 0 are told apart; equal keys are equal rows
    assert len({tuple(r) for r in keys.tolist()}) == 3
    assert keys[0].tolist() == keys[3].tolist()
    assert not ExtremaIndex.supports([STRING], STRING)
    assert not ExtremaIndex.supports([decimal(20, 2)], INT)

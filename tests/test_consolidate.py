"""Z-set normal form (runtime/zset.py consolidate_frame) against a Counter reference.

Consolidation runs through a sorted 64-bit row hash; these tests pin its exactness:
duplicate rows with NULLs, -0.0 against 0.0 and NaN (one group each, as in polars'
group-by and Spark's GROUP BY), zero weights, and a forced hash collision, which must
fall back to the exact group-by rather than merge two different rows.
"""

from __future__ import annotations

import math
from collections import Counter
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dbspc.runtime.zset as zset
from dbspc.compiler.types import BIGINT, DOUBLE, STRING
from dbspc.runtime.zset import ZSet, concat_frames, is_plain_number, rows_equal, take

TYPES = (BIGINT, STRING, DOUBLE)


def _norm(v: Any) -> Any:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v + 0.0  # -0.0 and 0.0 are one value
    return v


def _reference(rows: list[tuple[Any, ...]], weights: list[int]) -> dict[tuple[Any, ...], int]:
    c: Counter[tuple[Any, ...]] = Counter()
    for r, w in zip(rows, weights, strict=True):
        c[tuple(_norm(v) for v in r)] += w
    return {k: v for k, v in c.items() if v != 0}


def _as_counter(z: ZSet) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for row in z.frame.iter_rows():
        key = tuple(_norm(v) for v in row[:-1])
        assert key not in out, f"row {key} appears twice after consolidation"
        assert row[-1] != 0
        out[key] = row[-1]
    return out


rows_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-3, 3)),
        st.one_of(st.none(), st.sampled_from(["a", "b", ""])),
        st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, math.nan])),
        st.integers(-2, 2),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(rows_strategy)
def test_consolidate_matches_counter(data: list[tuple[Any, Any, Any, int]]) -> None:
    rows = [r[:3] for r in data]
    weights = [r[3] for r in data]
    got = _as_counter(ZSet.from_rows(rows, TYPES, weights).consolidate())
    want = _reference(rows, weights)
    assert dict(got) == want


plain_rows_strategy = st.lists(
    st.tuples(st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1.5, math.nan, -math.inf]), st.integers(-2, 2)),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(plain_rows_strategy, st.integers(0, 40), st.sampled_from([None, 1, 3]))
def test_plain_numbers_consolidate_in_one_compiled_pass(
    data: list[tuple[int, float, int]], cut: int, collide: int | None
) -> None:
    """Rows of plain numbers consolidate through spine.sum_groups (after the sort by hash,
    compare the bytes, sum): the same Z-set as the reference, in one chunk, with each
    kept row's hash, whether the rows come in one chunk or two. -0.0 against 0.0 and
    NaNs, and rows that only share a hash, differ as bytes: then grouping is exact."""
    types = (BIGINT, DOUBLE)
    rows, weights = [r[:2] for r in data], [r[2] for r in data]
    z = ZSet.from_rows(rows, types, weights)
    if 0 < cut < len(rows):
        z = ZSet(pl.concat([z.frame.head(cut), z.frame.tail(len(rows) - cut)], rechunk=False), types)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zset, "_collide", collide)
        got = z.consolidate()
        if got.frame.height:
            assert got.hashes is not None
            assert np.array_equal(got.hashes, zset.hash_rows(got.frame.get_columns()[:-1]))
    assert dict(_as_counter(got)) == _reference(rows, weights)
    assert got.frame.height == 0 or max(got.frame.n_chunks("all")) == 1


def test_plain_numbers_go_through_the_compiled_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    kernel = zset.spine.sum_groups
    monkeypatch.setattr(zset.spine, "sum_groups", lambda *a: calls.append(1) or kernel(*a))
    z = ZSet.from_rows([(1, 0.5), (2, 1.5), (1, 0.5), (3, 2.5)], (BIGINT, DOUBLE), [1, 1, -1, 2])
    assert z.consolidate().to_rows() == [((2, 1.5), 1), ((3, 2.5), 2)] and calls == [1]


def test_hash_collision_falls_back_to_exact_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row hashes alike: the equality check must see different rows and not merge them."""

    monkeypatch.setattr(zset, "_collide", 1)
    z = ZSet.from_rows([(1, "a", 0.0), (2, "a", 0.0), (1, "a", 0.0), (3, None, None)], TYPES, [1, 1, 2, -1])
    got = _as_counter(z.consolidate())
    assert got == {(1, "a", 0.0): 3, (2, "a", 0.0): 1, (3, None, None): -1}


def test_weight_column_must_be_last() -> None:
    frame = pl.DataFrame({"w": [1], "c0": [1]})
    with pytest.raises(ValueError, match="weight column"):
        zset.consolidate_frame(frame)


def test_large_batches_sort_in_parallel_and_agree() -> None:
    """Past _PARALLEL_SORT_ROWS the hashes sort with polars; the result is the same
    Z-set as a polars group-by's."""
    rng = np.random.default_rng(3)
    n = zset._PARALLEL_SORT_ROWS * 2 + 7
    frame = pl.DataFrame(
        {
            "c0": rng.integers(0, n // 3, n),
            "c1": pl.Series(rng.integers(0, 3, n)).cast(pl.String),
            "w": rng.integers(-2, 3, n),
        }
    )
    got = zset.consolidate_frame(frame).sort(["c0", "c1"])
    want = frame.group_by(["c0", "c1"]).agg(pl.col("w").sum()).filter(pl.col("w") != 0).sort(["c0", "c1"])
    assert got.equals(want)


@pytest.mark.parametrize("nulls", [False, True])
def test_numpy_gathers_and_concats_equal_polars(nulls: bool) -> None:
    """Small frames of plain numbers are gathered and concatenated in numpy
    (zset._frame_of); the result must equal polars' own, NaN and -0.0 kept as they are,
    every dtype of the fast path kept, and frames with NULLs going through polars."""
    rng = np.random.default_rng(3)
    n = 300
    floats = rng.normal(size=n)
    floats[::7] = np.nan
    floats[::11] = -0.0
    frame = pl.DataFrame(
        {
            "i8": pl.Series(rng.integers(-100, 100, n), dtype=pl.Int8),
            "i16": pl.Series(rng.integers(-1000, 1000, n), dtype=pl.Int16),
            "i32": pl.Series(rng.integers(-(2**31), 2**31 - 1, n), dtype=pl.Int32),
            "i64": pl.Series(rng.integers(-(2**62), 2**62, n), dtype=pl.Int64),
            "u32": pl.Series(rng.integers(0, 2**32 - 1, n), dtype=pl.UInt32),
            "f32": pl.Series(floats, dtype=pl.Float32),
            "f64": pl.Series(floats, dtype=pl.Float64),
            "w": pl.Series(rng.integers(-3, 3, n), dtype=pl.Int64),
        }
    )
    if nulls:
        frame = frame.with_columns(pl.when(pl.col("i32") > 0).then(pl.col("i32")).alias("i32"))
    rows = rng.integers(0, n, 500)
    gathered = take(frame, rows)
    expected = frame[pl.Series(rows)]
    assert gathered.schema == expected.schema
    assert gathered.equals(expected)  # equals compares NaN as equal, NULL as NULL
    for name in ("f32", "f64"):  # and the sign of zero survives
        assert np.array_equal(np.signbit(gathered[name].to_numpy()), np.signbit(expected[name].to_numpy()))
    both = concat_frames([gathered, frame, frame.head(0)])
    assert both.equals(pl.concat([expected, frame]))


def _every_kind(rng: np.random.Generator, n: int) -> pl.DataFrame:
    """A frame of every column type a trace holds, about a third of each column NULL."""
    floats = rng.normal(size=n)
    floats[::7] = np.nan
    floats[::11] = -0.0
    frame = pl.DataFrame(
        {
            "i8": pl.Series(rng.integers(-100, 100, n), dtype=pl.Int8),
            "i16": pl.Series(rng.integers(-1000, 1000, n), dtype=pl.Int16),
            "i32": pl.Series(rng.integers(-(2**31), 2**31 - 1, n), dtype=pl.Int32),
            "i64": pl.Series(rng.integers(-(2**62), 2**62, n), dtype=pl.Int64),
            "f32": pl.Series(floats, dtype=pl.Float32),
            "f64": pl.Series(floats, dtype=pl.Float64),
            "dec": pl.Series(rng.integers(-(10**15), 10**15, n)).cast(pl.Decimal(38, 4)) / 7,
            "small_dec": pl.Series(rng.integers(-(10**6), 10**6, n)).cast(pl.Decimal(10, 2)),
            "s": pl.Series(rng.integers(0, 50, n)).cast(pl.String) + "x",
            "b": pl.Series(rng.integers(0, 2, n) == 1),
            "d": pl.Series(rng.integers(-5000, 20000, n), dtype=pl.Int32).cast(pl.Date),
            "ts": pl.Series(rng.integers(0, 2**50, n)).cast(pl.Datetime("us")),
            "l": pl.Series([[int(v), None] for v in rng.integers(0, 9, n)], dtype=pl.List(pl.Int64)),
            "w": pl.Series(rng.integers(-3, 3, n), dtype=pl.Int64),
        }
    )
    blank = pl.Series(rng.integers(0, 3, n) == 0)
    return frame.with_columns(pl.when(blank).then(None).otherwise(pl.col(c)).alias(c) for c in frame.columns[:-1])


@pytest.mark.parametrize("sliced", [False, True])
def test_merger_gather_equals_polars_gather(sliced: bool) -> None:
    """The merger thread gathers a merge's rows outside polars (zset.take_pair_beside):
    every type, NULLs, NaN and -0.0 must come out as polars' own gather gives them,
    from runs that are slices of larger frames (Arrow offsets) as well."""
    rng = np.random.default_rng(11)
    a, b = _every_kind(rng, 700), _every_kind(rng, 500)
    if sliced:
        a, b = a.slice(13, 600), b.slice(101, 333)
    rows = rng.permutation(a.height + b.height)[: a.height + b.height - 40]
    gathered = zset.take_pair_beside(a, b, rows)
    expected = pl.concat([a, b])[pl.Series(rows)]
    assert gathered.schema == expected.schema
    assert gathered.equals(expected)
    for name in ("f32", "f64"):
        assert np.array_equal(np.signbit(gathered[name].to_numpy()), np.signbit(expected[name].to_numpy()))
    assert zset.take_pair_beside(a, b, rows[:0]).equals(expected.head(0))


@pytest.mark.parametrize("sliced", [False, True])
def test_column_gather_and_stack_equal_polars(sliced: bool) -> None:
    """take gathers column by column and stack appends chunks, both outside polars'
    thread pool: every type, NULLs, NaN and -0.0, chunked and sliced frames, and no rows
    must come out as polars' frame gather and concat give them."""
    rng = np.random.default_rng(5)
    a, b = _every_kind(rng, 700), _every_kind(rng, 500)
    if sliced:
        a, b = a.slice(13, 600), b.slice(101, 333)
    stacked = zset.stack([a, b, a.head(0)])
    assert stacked.equals(pl.concat([a, b]))
    rows = rng.integers(0, stacked.height, 900)
    for frame in (stacked, stacked.rechunk()):  # two chunks, then one
        assert take(frame, rows).equals(frame[pl.Series(rows)])
        assert take(frame, rows[:0]).equals(frame.head(0))
        assert zset.take_series(frame["s"], rows).equals(frame["s"][pl.Series(rows)])
    many = zset.stack([a] * 40)  # stacking again and again does not fragment without end
    assert many.n_chunks() <= zset._MAX_CHUNKS and many.equals(pl.concat([a] * 40))
    with pytest.raises(pl.exceptions.PolarsError):  # names and dtypes must agree, as in pl.concat
        zset.stack([a, b.rename({"i8": "x"})])


@pytest.mark.parametrize(
    "dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt32, pl.UInt64, pl.Float32, pl.Float64]
)
@pytest.mark.parametrize("nulls", [False, True])
def test_row_hash_of_numbers_is_the_same_through_numpy_and_arrow(
    dtype: type[pl.DataType], nulls: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hash_rows reads a number column without NULLs through polars' numpy view and any
    other through its Arrow buffers; both give each value one hash (checkpoints keep
    them), whatever the slicing or chunking, and a value hashes alike in every integer
    width."""
    values: list[Any] = [0, 1, 5, 7, 100 if dtype.is_unsigned_integer() else -100, 3, 1]
    if nulls:
        values[2] = None
    column = pl.Series("c0", values, dtype=dtype)
    chunked = pl.concat([column.slice(0, 3), column.slice(3)], rechunk=False)
    shapes = [column, column.slice(2, 4), chunked]
    through_numpy = [zset.hash_rows([c]) for c in shapes]
    monkeypatch.setattr(zset, "_PySeries", None)  # (the Arrow path)
    monkeypatch.setattr(zset, "_MASKED", False)
    through_arrow = [zset.hash_rows([c]) for c in shapes]
    for a, b in zip(through_numpy, through_arrow, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(through_numpy[1], through_numpy[0][2:6])
    assert np.array_equal(through_numpy[2], through_numpy[0])
    if dtype.is_integer():
        assert np.array_equal(through_numpy[0], zset.hash_rows([column.cast(pl.Int64)]))


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (pl.Int8, [-128, None, 127, 0, None, 5]),
        (pl.Int64, [-(2**63), None, 2**63 - 1, 0, 7, 7]),
        (pl.UInt64, [2**64 - 1, None, 0, 3, None, 3]),
        (pl.Float32, [1.5, None, float("nan"), -0.0, 0.0, 2.25]),
        (pl.Float64, [float("nan"), None, -0.0, 0.0, float("inf"), 1e300]),
        (pl.Boolean, [True, None, False, True, None, False]),
        (pl.Int32, [None, None, None, None, None, None]),
    ],
)
def test_a_small_column_with_nulls_or_chunks_hashes_as_through_arrow(
    dtype: type[pl.DataType], values: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small column of numbers or booleans with NULLs, or in chunks, is read as
    polars' numpy values and NULL mask (`_mix_masked`): each row gets the hash the Arrow
    path gives it (NaN = NaN, -0.0 = 0.0, a NULL unlike any value)."""
    column = pl.Series("c0", values, dtype=dtype)
    chunked = pl.concat([column.slice(0, 2), column.slice(2, 1), column.slice(3)], rechunk=False)
    shapes = [column, chunked, column.slice(1, 4)]
    masked = [zset.hash_rows([c]) for c in shapes]
    monkeypatch.setattr(zset, "_MASKED", False)
    monkeypatch.setattr(zset, "_PySeries", None)
    through_arrow = [zset.hash_rows([c]) for c in shapes]
    for a, b in zip(masked, through_arrow, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(masked[1], masked[0])
    if dtype.is_float():  # -0.0 and 0.0 as the kernels canonicalise them
        signs = [i for i, v in enumerate(values) if v == 0.0]
        assert len(signs) == 2 and masked[0][signs[0]] == masked[0][signs[1]]


@pytest.mark.parametrize(
    "values",
    [
        ["a", None, "", "日本", "b", "a"],
        [True, None, False, True, False, True],
        [Decimal("1.50"), None, Decimal("-2.25"), Decimal("0"), Decimal("9.99"), Decimal("1.50")],
        [[1, 2], None, [], [3], [1, 2], [4, 5]],
    ],
)
def test_a_chunked_column_hashes_chunk_by_chunk_as_one(values: list[Any]) -> None:
    """hash_rows hashes a column of several chunks chunk by chunk into slices of the
    hashes, not through one combined copy: each row's hash is the one it has in one chunk."""
    column = pl.Series("c0", values)
    chunked = pl.concat([column.slice(0, 2), column.slice(2, 1), column.slice(3)], rechunk=False)
    assert chunked.n_chunks() == 3
    assert np.array_equal(zset.hash_rows([chunked, column]), zset.hash_rows([column, column]))


@pytest.mark.parametrize("weights", [[1, 2, 3, 4], [1, 2, 0, -4]])
def test_a_consolidated_frame_is_in_one_chunk(weights: list[int]) -> None:
    """A change that arrives in chunks (a concatenation, an Arrow batch) consolidates to
    columns of one chunk, which the operators after it read as numpy views."""
    rows = [(1, "a", 0.5), (2, None, 1.5), (3, "c", 2.5), (4, "d", 3.5)]
    first, second = ZSet.from_rows(rows[:2], TYPES, weights[:2]), ZSet.from_rows(rows[2:], TYPES, weights[2:])
    chunked = ZSet(pl.concat([first.frame, second.frame], rechunk=False), TYPES)
    assert max(chunked.frame.n_chunks("all")) == 2
    z = chunked.consolidate()
    assert z.frame.n_chunks("all") == [1] * 4
    assert z.to_rows() == chunked.to_rows()


def test_a_batch_is_hashed_by_its_key_once() -> None:
    """`ZSet.key_hashes` is `hash_rows` of the key columns, made once per batch (a table's
    change is read by its delete check, its joins' probes and its integral's insert), and
    a consolidated batch's row hashes serve for the whole row."""
    z = ZSet.from_rows([(1, "a", 0.5), (2, None, -0.0), (1, "b", math.nan)], TYPES)
    by_key = z.key_hashes([0, 1])
    assert by_key is z.key_hashes((0, 1))
    columns = [z.frame.get_column(c) for c in ("c0", "c1")]
    assert np.array_equal(by_key, zset.hash_rows(columns))
    assert not np.array_equal(z.key_hashes([1]), by_key)
    whole = z.consolidate()
    assert whole.hashes is not None and whole.key_hashes(range(3)) is whole.hashes


def test_128_bit_integers_are_compared_through_polars() -> None:
    """numpy has no 128-bit integers (polars' to_numpy of one raises), so they are not
    plain numbers: rows of them compare through polars, as values, whatever their size."""
    big = pl.Series("x", [1, -(2**100), 3], dtype=pl.Int128)
    assert not is_plain_number(big)
    other = pl.Series("x", [3, -(2**100), 1], dtype=pl.Int128)
    assert rows_equal([big], np.array([0, 1]), [other], np.array([2, 1]))
    assert not rows_equal([big], np.array([0, 1]), [other], np.array([0, 1]))

"""Columnar Z-set batches.

A Z-set maps rows to integer weights (DBSP §4). A batch holds it as a polars frame:
columns `c0 .. c{n-1}` in the relation's column order, with SQL types fixed by the
compiler, plus the int64 weight column `w`. A consolidated batch has each distinct
row once and no zero weight; kernels consolidate where the algebra needs it, never
row by row in Python.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.types import SqlType
from dbspc.runtime.native import rowhash, spine

WEIGHT = "w"


def col_name(index: int) -> str:
    return f"c{index}"


# made once: a step asks for these hundreds of times (polars types are immutable)
_POLARS_TYPES: dict[str, pl.DataType] = {
    "TINYINT": pl.Int8(),
    "SMALLINT": pl.Int16(),
    "INT": pl.Int32(),
    "BIGINT": pl.Int64(),
    "FLOAT": pl.Float32(),
    "DOUBLE": pl.Float64(),
    "STRING": pl.String(),
    "BOOLEAN": pl.Boolean(),
    "DATE": pl.Date(),
    "TIMESTAMP": pl.Datetime("us"),
    "TIMESTAMP_NTZ": pl.Datetime("us"),
    "NULL": pl.Null(),
}


def polars_dtype(t: SqlType) -> pl.DataType:
    """The columnar type that holds values of SQL type `t`."""
    if t.kind == "DECIMAL":
        assert t.precision is not None
        return pl.Decimal(t.precision, t.scale or 0)
    if t.element is not None:
        return pl.List(polars_dtype(t.element))
    return _POLARS_TYPES[t.kind]


def schema_of(types: Sequence[SqlType]) -> dict[str, pl.DataType]:
    schema = {col_name(i): polars_dtype(t) for i, t in enumerate(types)}
    schema[WEIGHT] = pl.Int64()
    return schema


@dataclass(frozen=True, slots=True)
class ZSet:
    """A batch of weighted rows with a fixed SQL schema."""

    frame: pl.DataFrame
    types: tuple[SqlType, ...]
    # known to be in normal form (each row once, no zero weight): consolidate() is free
    consolidated: bool = field(default=False, compare=False)
    # `hash_rows` of the columns c0.. when known (consolidate() computes it): a trace that
    # inserts or checks these rows reads it instead of hashing them again
    hashes: np.ndarray | None = field(default=None, compare=False, repr=False)
    # `key_hashes`' answers by key columns (a batch never changes, so neither do they)
    key_cache: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def columns(self) -> list[str]:
        return [col_name(i) for i in range(len(self.types))]

    def __len__(self) -> int:
        return self.frame.height

    def key_hashes(self, keys: Sequence[int]) -> np.ndarray:
        """`hash_rows` of columns `keys` (at least one), made once per batch: a table's
        change is hashed by its join key for the delete check, for each join term that
        probes with it and for its integral's insert (6 of a 1,000-row step's 11 calls
        in pydbsp's join hashed the same columns again)."""
        keys = tuple(keys)
        if self.hashes is not None and keys == tuple(range(len(self.types))):
            return self.hashes
        found = self.key_cache.get(keys)
        if found is None:
            found = self.key_cache[keys] = hash_rows([self.frame.get_column(col_name(k)) for k in keys])
        return found

    @staticmethod
    def empty(types: Sequence[SqlType]) -> ZSet:
        types = tuple(types)
        # keyed by the CHAR/VARCHAR lengths too, which type equality leaves out
        return _empty(types, tuple((t.length, t.fixed) for t in types))

    @staticmethod
    def from_rows(
        rows: Iterable[Sequence[Any]], types: Sequence[SqlType], weights: Iterable[int] | None = None
    ) -> ZSet:
        """Build a batch from Python rows (tests and scripts; not a hot path)."""
        rows = [tuple(r) for r in rows]
        ws = [1] * len(rows) if weights is None else list(weights)
        data: dict[str, list[Any]] = {col_name(i): [r[i] for r in rows] for i in range(len(types))}
        data[WEIGHT] = ws
        frame = pl.DataFrame(data, schema=schema_of(types), strict=False)
        return ZSet(frame, tuple(types))

    @staticmethod
    def from_frame(frame: pl.DataFrame, types: Sequence[SqlType]) -> ZSet:
        """Adopt a frame whose columns are already c0.. and w, casting to the schema."""
        types = tuple(types)
        names, dtypes = _layout(types)
        if frame.columns != names or frame.dtypes != dtypes:
            frame = frame.select([pl.col(name).cast(dtype) for name, dtype in zip(names, dtypes, strict=True)])
        return ZSet(frame, types)

    def consolidate(self) -> ZSet:
        """Merge equal rows by adding their weights and drop zero weights."""
        if self.frame.height == 0 or self.consolidated:
            return self
        if not self.types:
            total = int(self.frame[WEIGHT].sum())
            frame = pl.DataFrame({WEIGHT: [total]}, schema={WEIGHT: pl.Int64()})
            return ZSet(frame.filter(pl.col(WEIGHT) != 0), self.types, True)
        frame, hashes = consolidate_frame_hashed(self.frame)
        return ZSet(frame, self.types, True, hashes)

    def _weighted(self, weights: pl.Series) -> pl.DataFrame:
        """The frame with its weight column replaced (no polars query)."""
        return frame_of([weights if c.name == WEIGHT else c for c in self.frame.get_columns()])

    def negate(self) -> ZSet:
        # (in numpy: a Series' arithmetic is a polars query, ~15-150 us)
        return self.scale(-1)

    def scale(self, factor: int) -> ZSet:
        if factor == 0:
            return ZSet.empty(self.types)
        weights = int64_series(WEIGHT, self.frame.get_column(WEIGHT).to_numpy() * factor)
        return ZSet(self._weighted(weights), self.types, self.consolidated)

    @staticmethod
    def concat(parts: Sequence[ZSet], types: Sequence[SqlType]) -> ZSet:
        """The sum of batches, unconsolidated."""
        nonempty = [p for p in parts if p.frame.height]
        if not nonempty:
            return ZSet.empty(types)
        if len(nonempty) == 1:
            return ZSet(nonempty[0].frame, tuple(types), nonempty[0].consolidated)
        frames = [p.frame for p in nonempty]
        return ZSet(concat_frames(frames), tuple(types))

    def is_positive(self) -> bool:
        return self.frame.height == 0 or int(self.frame[WEIGHT].min()) > 0  # type: ignore[arg-type]

    def to_rows(self) -> list[tuple[tuple[Any, ...], int]]:
        """Consolidated (row, weight) pairs in a deterministic order (NULLs first)."""
        z = self.consolidate()
        rows = [(tuple(r[:-1]), int(r[-1])) for r in _python_safe(z.frame).iter_rows()]
        rows.sort(key=lambda rw: (tuple(sort_key(v) for v in rw[0]), rw[1]))
        return rows


@functools.lru_cache(maxsize=4096)
def _layout(types: tuple[SqlType, ...]) -> tuple[list[str], list[pl.DataType]]:
    """A batch's column names and dtypes, w last, by its types: made once (every operator
    that builds a batch adopts it through `from_frame`, whose schema cost ~20 calls into
    polars and Python a batch). Lists, to compare with a frame's; never changed."""
    schema = schema_of(types)
    return list(schema), list(schema.values())


@functools.lru_cache(maxsize=4096)
def _empty(types: tuple[SqlType, ...], lengths: tuple[tuple[int | None, bool], ...]) -> ZSet:
    """Empty batches are made often (a polars frame from a schema costs ~0.1 ms) and never
    change: polars frames are immutable, so one per schema serves every caller."""
    return ZSet(pl.DataFrame(schema=schema_of(types)), types)


def concat_frames(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The frames one under the other. Frames of one schema are appended as they are
    (microseconds; small frames of plain numbers are copied in numpy, ~3x cheaper than
    polars' call); others are cast to a common one first, which costs a polars query
    (~0.1 ms: a recursion step makes dozens of these)."""
    if sum(f.height for f in frames) <= _NUMPY_ROWS:
        parts = [p for f in frames if (p := _numpy_columns(f)) is not None]
        if len(parts) == len(frames) and parts[0][0]:
            names, dtypes = parts[0][0], [v.dtype for v in parts[0][1]]
            if all(p[0] == names and [v.dtype for v in p[1]] == dtypes for p in parts[1:]):
                return _frame_of_arrays(names, [np.concatenate([p[1][i] for p in parts]) for i in range(len(names))])
    first = frames[0].dtypes
    if all(f.dtypes == first for f in frames[1:]):
        return stack(frames)
    return pl.concat(frames, how="vertical_relaxed")


# A stacked frame is rechunked (copied into one chunk) once it holds more chunks than
# this, so that frames stacked again and again do not fragment.
_MAX_CHUNKS = 16


def stack(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Frames of one schema (names and dtypes: polars checks) one under the other, their
    columns' chunks appended as they are: ~4 us, where pl.concat costs 45-70 us a call,
    for it runs as jobs of polars' thread pool even when nothing is copied."""
    out = frames[0]
    for frame in frames[1:]:
        out = out.vstack(frame)
    if len(frames) > 1 and out.n_chunks() > _MAX_CHUNKS:
        out = out.rechunk()
    return out


def one_chunk(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with each column in one chunk, column by column in this thread (a frame's
    rechunk runs as jobs of polars' thread pool, ~0.1 ms inside a step)."""
    columns = frame.get_columns()
    if all(c.n_chunks() == 1 for c in columns):
        return frame
    return frame_of([c.rechunk() for c in columns])


def frame_of(columns: Sequence[pl.Series]) -> pl.DataFrame:
    """A frame of these Series (distinct names, equal lengths: polars checks both), without
    pl.DataFrame()'s inference of what it was given (~12 us against ~2 us)."""
    if _PyDataFrame is None:  # pragma: no cover - another polars
        return pl.DataFrame(columns)
    return pl.DataFrame._from_pydf(_PyDataFrame([c._s for c in columns]))


def pick(frame: pl.DataFrame, names: Sequence[str], aliases: Sequence[str] | None = None) -> pl.DataFrame:
    """frame.select(names), renamed to `aliases`: built from the column objects, which
    costs microseconds where a select through polars' query engine costs ~0.1 ms."""
    if aliases is None:
        return frame_of([frame.get_column(n) for n in names])
    return frame_of([frame.get_column(n).alias(a) for n, a in zip(names, aliases, strict=True)])


_INDEX = pl.UInt64 if pl.get_index_type() == pl.UInt64 else pl.UInt32
_INDEX_NUMPY = np.uint64 if _INDEX == pl.UInt64 else np.uint32

# polars' typed constructors copy a contiguous numpy array in ~0.5 us, where pl.Series()
# spends ~9 us inferring and checking (a step builds hundreds of index and weight
# Series). Private, so only with the pinned polars that has them (the fallback is exact).
_NEW_INDEX: Any
_NEW_I64: Any
_GATHER: Any
_PyDataFrame: Any
try:
    from polars._plr import PyDataFrame as _PyDataFrame
    from polars._plr import PySeries as _PySeries

    _NEW_INDEX = _PySeries.new_u64 if _INDEX == pl.UInt64 else _PySeries.new_u32
    _NEW_I64 = _PySeries.new_i64
    _GATHER = _PySeries.gather_with_series
except (ImportError, AttributeError):  # pragma: no cover - another polars
    _NEW_INDEX = _NEW_I64 = _GATHER = _PyDataFrame = None


def _index(rows: np.ndarray) -> pl.Series:
    """Row numbers (non-negative, in range) as polars' index type."""
    values = np.ascontiguousarray(rows, dtype=_INDEX_NUMPY)
    if _NEW_INDEX is None:  # pragma: no cover
        return pl.Series(values)
    return pl.Series._from_pyseries(_NEW_INDEX("", values, True))


def int64_series(name: str, values: np.ndarray) -> pl.Series:
    """An Int64 Series of `values` (weights, counts), built without pl.Series' checks."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    if _NEW_I64 is None:  # pragma: no cover
        return pl.Series(name, values, dtype=pl.Int64)
    return pl.Series._from_pyseries(_NEW_I64(name, values, True))


# Frames up to this many rows whose columns are all plain numbers without NULLs are
# gathered and concatenated in numpy: ~6 us for 500 rows of 4 columns where polars'
# gather costs ~15 us and its concat ~16 us, whatever the size (a recursion iteration
# makes dozens of each). Above it, polars' multithreaded kernels win.
_NUMPY_ROWS = 1 << 16
_NEW_SERIES: dict[np.dtype[Any], Any] = {}
try:
    _NEW_SERIES = {
        np.dtype(np.int8): _PySeries.new_i8,
        np.dtype(np.int16): _PySeries.new_i16,
        np.dtype(np.int32): _PySeries.new_i32,
        np.dtype(np.int64): _PySeries.new_i64,
        np.dtype(np.uint32): _PySeries.new_u32,
        np.dtype(np.uint64): _PySeries.new_u64,
        np.dtype(np.float32): _PySeries.new_f32,
        np.dtype(np.float64): _PySeries.new_f64,
    }
except NameError:  # pragma: no cover - another polars
    pass


def _numpy_columns(frame: pl.DataFrame) -> tuple[list[str], list[np.ndarray]] | None:
    """The frame's columns as numpy views, when every one is a plain number column
    without NULLs in one chunk (polars' own view: no copy, no checks); else None."""
    names, values = [], []
    for s in frame._df.get_columns():
        v = s.to_numpy_view()
        if v is None or v.dtype not in _NEW_SERIES or s.null_count():
            return None
        names.append(s.name())
        values.append(v)
    return names, values


def _new_series(name: str, values: np.ndarray) -> Any:
    """polars' series of a numpy column of a dtype in _NEW_SERIES, by its typed
    constructor (NaN stays NaN: False is the float constructors' nan_is_null)."""
    return _NEW_SERIES[values.dtype](name, np.ascontiguousarray(values), False)


def _frame_of_arrays(names: Sequence[str], values: Sequence[np.ndarray]) -> pl.DataFrame:
    """A frame of numpy columns of the dtypes in _NEW_SERIES."""
    return pl.DataFrame._from_pydf(_PyDataFrame([_new_series(n, v) for n, v in zip(names, values, strict=True)]))


def decimal_series(name: str, words: np.ndarray, valid: np.ndarray | None, precision: int, scale: int) -> pl.Series:
    """DECIMAL(precision, scale) from its decimal128 slots, `words` a C-contiguous (n, 2)
    int64 (or uint64) array of low and high words, NULL where not `valid` (None: none).
    Through polars' own Arrow import: pl.Series() dispatches on the value's type in
    Python first, ~80 us inside a step where the import itself takes a few."""
    validity = None if valid is None or valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    kind = pa.decimal128(precision, scale)
    array = pa.Array.from_buffers(kind, len(words), [validity, pa.py_buffer(words)])
    if _PyDataFrame is None:  # pragma: no cover - another polars
        return pl.Series(name, array)
    return pl.Series._from_pyseries(_PySeries.from_arrow(name, array))


def decimal_of_int64(name: str, values: np.ndarray, valid: np.ndarray | None, precision: int, scale: int) -> pl.Series:
    """DECIMAL(precision, scale) from int64 unscaled values (`decimal_series`)."""
    words = np.empty((len(values), 2), dtype=np.int64)
    words[:, 0] = values
    words[:, 1] = values >> 63  # the high word: the low word's sign
    return decimal_series(name, words, valid, precision, scale)


def series_of_numbers(name: str, values: np.ndarray) -> pl.Series | None:
    """A Series of this numpy column (plain numbers, no NULLs) through polars' typed
    constructor, or None when its dtype has none."""
    if _PyDataFrame is None or values.dtype not in _NEW_SERIES:
        return None
    return pl.Series._from_pyseries(_new_series(name, values))


def frame_of_numbers(names: Sequence[str], values: Sequence[np.ndarray]) -> pl.DataFrame | None:
    """A frame of these numpy columns (plain numbers, no NULLs) through polars' typed
    constructors, or None when a dtype has none (the caller then gathers in polars)."""
    if _PyDataFrame is None or any(v.dtype not in _NEW_SERIES for v in values):
        return None
    return _frame_of_arrays(names, values)


# The numpy dtype of each polars dtype that _NEW_SERIES builds, read off polars once
_NUMPY_OF_DTYPE: dict[pl.DataType, np.dtype[Any]] = {pl.Series(np.empty(0, d)).dtype: d for d in _NEW_SERIES}


def frame_of_bytes(
    names: Sequence[str], dtypes: Sequence[pl.DataType], columns: Sequence[np.ndarray], weights: np.ndarray
) -> pl.DataFrame | None:
    """A frame of columns `names` of `dtypes`, then the weights, from each column's values as
    C-contiguous (rows, width) bytes of plain numbers or decimal128 slots without NULLs
    (what `spine.merge_rows` gathers); None when a dtype is of another kind."""
    if _PyDataFrame is None or not len(weights):
        return None
    out = []
    for name, dtype, values in zip(names, dtypes, columns, strict=True):
        plain = _NUMPY_OF_DTYPE.get(dtype)
        if plain is not None and values.shape[1] == plain.itemsize:
            out.append(_new_series(name, values.view(plain).reshape(-1)))
        elif isinstance(dtype, pl.Decimal) and values.shape[1] == 16:
            out.append(decimal_series(name, values.view(np.int64), None, dtype.precision or 38, dtype.scale or 0)._s)
        else:
            return None
    out.append(_new_series(WEIGHT, weights))
    return pl.DataFrame._from_pydf(_PyDataFrame(out))


def take(frame: pl.DataFrame, rows: np.ndarray) -> pl.DataFrame:
    """frame's rows `rows` (in range, non-negative), in that order: a small frame of plain
    numbers in numpy, the others column by column. A whole-frame gather runs as jobs of
    polars' thread pool, whose dispatch cost 60-200 us a call inside a step even for no
    rows; a column's own gather runs in this thread (~1 us and the copy), and calling it
    directly skips Series.__getitem__'s ~8 us of checks of an index we know is valid."""
    if len(rows) <= _NUMPY_ROWS and (plain := _numpy_columns(frame)) is not None and plain[0]:
        return _frame_of_arrays(plain[0], [v[rows] for v in plain[1]])
    index = _index(rows)
    if _GATHER is None or not frame.width:  # pragma: no cover - another polars
        return frame[index]
    return pl.DataFrame._from_pydf(_PyDataFrame([_GATHER(c._s, index._s) for c in frame.get_columns()]))


def with_weights(fresh: pl.DataFrame, weights: np.ndarray) -> pl.DataFrame:
    """`fresh` (a frame no one else holds, as a gather is) with its weight column (the
    last) replaced by `weights`, in place, without a polars query."""
    fresh.replace_column(fresh.width - 1, int64_series(WEIGHT, weights))
    return fresh


def take_weighted(frame: pl.DataFrame, rows: np.ndarray, weights: np.ndarray) -> pl.DataFrame:
    """`take(frame, rows)` with the weights `weights`."""
    return with_weights(take(frame, rows), weights)


def take_series(column: pl.Series, rows: np.ndarray) -> pl.Series:
    """column's values at `rows` (as `take`; Series.gather costs ~30 us, this ~2 us)."""
    if _GATHER is None:  # pragma: no cover - another polars
        return column[_index(rows)]
    return pl.Series._from_pyseries(_GATHER(column._s, _index(rows)._s))


# Arrow's fixed-width values as numpy integers of the same width (decimal128: two words)
_WIDTH_DTYPES = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64, 16: np.int64}


def take_pair_beside(a: pl.DataFrame, b: pl.DataFrame, rows: np.ndarray) -> pl.DataFrame:
    """The rows `rows` of `a` stacked on `b` (same schema), gathered without polars.

    For the merger thread: polars runs a gather as jobs of its shared thread pool, and
    a gather of millions of rows there held the pool for up to 0.2 s, stalling every
    small polars call of the step running beside it (measured: a 1k-row gather waited
    up to 227 ms behind one of 10M rows; with numpy or Arrow's kernels, at most ~5 ms).
    Fixed-width columns are gathered in numpy over their Arrow buffers, the others
    with Arrow's take; a column that comes back as another polars type is gathered by
    polars after all."""
    in_a = rows < a.height
    a_rows, b_rows = rows[in_a], rows[~in_a] - a.height
    indices: pa.Array | None = None
    out = []
    for sa, sb in zip(a.get_columns(), b.get_columns(), strict=True):
        xa, xb = arrow_of(sa), arrow_of(sb)
        width = xa.type.bit_width // 8 if _fixed_width(xa.type) else 0
        if width in _WIDTH_DTYPES and xa.type == xb.type:
            values = np.empty((len(rows), 2) if width == 16 else len(rows), dtype=_WIDTH_DTYPES[width])
            values[in_a] = _values(xa, width)[a_rows]
            values[~in_a] = _values(xb, width)[b_rows]
            validity, nulls = None, 0
            if xa.null_count or xb.null_count:
                valid = np.empty(len(rows), dtype=bool)
                valid[in_a] = _validity(xa)[a_rows]
                valid[~in_a] = _validity(xb)[b_rows]
                nulls = int(len(rows) - np.count_nonzero(valid))
                validity = pa.py_buffer(np.packbits(valid, bitorder="little"))
            array = pa.Array.from_buffers(xa.type, len(rows), [validity, pa.py_buffer(values)], null_count=nulls)
        else:
            indices = pa.array(rows) if indices is None else indices
            array = pa.chunked_array([xa, xb], type=xa.type).take(indices)
        column = pl.Series(sa.name, array)
        out.append(column if column.dtype == sa.dtype else take_series(pl.concat([sa, sb]), rows))
    return frame_of(out)


def arrow_of(column: pl.Series) -> pa.Array:
    """The column as one Arrow array (its chunks combined), to read its buffers. Asked of
    polars' own series: Series.to_arrow is wrapped by a check of renamed arguments, which
    cost more than the export inside a step."""
    array = column._s.to_arrow(False) if _PyDataFrame is not None else column.to_arrow()
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _fixed_width(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal128(t) or pa.types.is_temporal(t)
    )


def _values(array: pa.Array, width: int) -> np.ndarray:
    """A fixed-width Arrow array's value slots as numpy integers (a view, no copy)."""
    words = 2 if width == 16 else 1
    flat = np.frombuffer(array.buffers()[1], dtype=_WIDTH_DTYPES[width], count=(array.offset + len(array)) * words)
    slots = flat.reshape(-1, 2) if width == 16 else flat
    return slots[array.offset :]


def _validity(array: pa.Array) -> np.ndarray:
    """Per slot, whether it holds a value (Arrow's bitmap unpacked; no bitmap: all)."""
    bitmap = array.buffers()[0]
    if bitmap is None:
        return np.ones(len(array), dtype=bool)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[array.offset : array.offset + len(array)].astype(bool)


# Fixed, so that hashes agree wherever they are compared (trace keys and runs included).
ROW_HASH_SEED = 0x5EED_DB5

# Tests set this to force hash collisions (tests/collisions.py): every hash is reduced
# modulo it, and the exact fallbacks must still give the same answers.
_collide: int | None = None


def hash_rows(columns: Sequence[pl.Series], seed: int = ROW_HASH_SEED) -> np.ndarray:
    """A uint64 hash of each row of `columns` (at least one; equal lengths), equal for
    equal rows (NULL = NULL, NaN = NaN, -0.0 = 0.0, as `rows_equal` compares them), and
    the same whatever the columns' chunking. One compiled call per column over its Arrow
    buffers (runtime/native/rowhash.pyx): ~2-5 us a column where polars' hash_rows costs
    ~20-60 us a call."""
    h = np.full(len(columns[0]), seed, dtype=np.uint64)
    if len(h):
        for column in columns:
            _mix_column(h, column, seed)
    if _collide is not None:
        h %= np.uint64(_collide)
    return h


# Up to this many rows, a column of integers, floats or booleans with NULLs, or in
# several chunks, is read as polars' numpy values and NULL mask in one call (~1.5 us)
# rather than through Arrow (~9 us a chunk: to_arrow, buffers, type tests); the small
# batches of a view's steps hash several such columns each. Larger ones keep Arrow's
# buffers, which a single chunk lends without a copy.
_MASKED_ROWS = 1 << 12
_MASKED = _PyDataFrame is not None and hasattr(_PySeries, "to_numpy_masked")
_MASKED_DTYPES: frozenset[type[pl.DataType]] = frozenset(
    (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.Float32, pl.Float64)
) | {pl.Boolean}


def _mix_column(h: np.ndarray, column: pl.Series, seed: int) -> None:
    if _MASKED and len(h) <= _MASKED_ROWS and (column.null_count() or column.n_chunks() > 1):
        if type(column.dtype) in _MASKED_DTYPES:
            _mix_masked(h, *column._s.to_numpy_masked(False, True))
            return
    if column.n_chunks() > 1:
        # chunk by chunk into views of h: combining the chunks first copies the column
        # (~50-80 us for 4k rows a column), and a row's hash does not depend on its chunk
        at = 0
        for chunk in column.get_chunks():
            _mix_column(h[at : at + len(chunk)], chunk, seed)
            at += len(chunk)
        return
    # plain numbers without NULLs through polars' own numpy view (~0.5 us), the same
    # bytes the Arrow path below reads at ~15 us a column
    view = column._s.to_numpy_view() if _PySeries is not None else None
    if view is not None and view.dtype.kind in "iuf" and not column.null_count():
        raw = np.ascontiguousarray(view).view(np.int8)
        if view.dtype.kind == "f":
            rowhash.mix_float(h, raw, view.itemsize, 0, None)
        else:
            rowhash.mix_fixed(h, raw, view.itemsize, view.dtype.kind == "i", 0, None)
        return
    array = arrow_of(column)
    t, offset = array.type, array.offset
    buffers = array.buffers()
    validity = buffers[0] if array.null_count else None
    if pa.types.is_null(t):
        rowhash.mix_nulls(h)
    elif pa.types.is_boolean(t):
        rowhash.mix_bool(h, buffers[1], offset, validity)
    elif pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t):
        rowhash.mix_fixed(h, buffers[1], t.bit_width // 8, not pa.types.is_unsigned_integer(t), offset, validity)
    elif pa.types.is_decimal128(t):
        rowhash.mix_fixed(h, buffers[1], 16, True, offset, validity)
    elif pa.types.is_float32(t) or pa.types.is_float64(t):
        rowhash.mix_float(h, buffers[1], t.bit_width // 8, offset, validity)
    elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
        data = buffers[2] if buffers[2] is not None else b""
        rowhash.mix_binary(h, buffers[1], data, wide, offset, validity)
    else:  # lists and other nested types: polars hashes the values, the kernel mixes them in
        rowhash.mix_hashes(h, np.asarray(column.hash(seed).to_numpy(), dtype=np.uint64))


def _mix_masked(h: np.ndarray, values: np.ndarray, nulls: np.ndarray | None) -> None:
    """Mix in numbers (or booleans) given as numpy values and a NULL mask (values under
    a NULL are unspecified): the Arrow path's kernels, with the mask packed into an
    Arrow validity bitmap, so each row hashes as it would through Arrow."""
    validity = None if nulls is None else np.packbits(~nulls, bitorder="little").view(np.int8)
    raw = np.ascontiguousarray(values).view(np.int8)
    if values.dtype.kind == "f":
        rowhash.mix_float(h, raw, values.itemsize, 0, validity)
    else:  # (a boolean's byte is 0 or 1: the value mix_bool mixes in for its bit)
        rowhash.mix_fixed(h, raw, values.itemsize, values.dtype.kind == "i", 0, validity)


@dataclass(frozen=True, slots=True)
class RowGroups:
    """Rows grouped by equality: `order` lists the rows group by group, `starts` where
    each group begins in it, `reps` one row of each group; `hashes` each row's
    `hash_rows` (None when not computed), for callers that probe by them."""

    order: np.ndarray
    starts: np.ndarray
    reps: np.ndarray
    hashes: np.ndarray | None = None

    @property
    def distinct(self) -> bool:
        return len(self.starts) == len(self.order)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Per group, the sum of `values` (one per row; or rows of a 2-d array)."""
        return np.add.reduceat(values[..., self.order], self.starts, axis=-1)


# Above this many rows polars' parallel sort beats a single-threaded one (~3x numpy's at
# 1M rows on 2 cores); below it the compiled run sort is cheaper (15 us at 1k rows, where
# numpy's argsort takes 30).
_PARALLEL_SORT_ROWS = 50_000


def argsort_hashes(hashes: np.ndarray) -> np.ndarray:
    """An order (int64, as the kernels take it) that sorts `hashes` (uint64); equal
    hashes in no particular order."""
    if len(hashes) < _PARALLEL_SORT_ROWS:  # (the run sort, by (hash, hash, row number))
        hashes = np.ascontiguousarray(hashes)
        order: np.ndarray = spine.sort_groups(hashes, hashes)[0]
        return order
    return pl.Series(hashes).arg_sort().to_numpy().astype(np.int64)  # (polars' index is u32)


# Above this many rows polars' multithreaded sort beats the compiled one (two hash
# columns on 2 cores: 1M rows ~30 ms against ~20; 4M ~120 against ~150).
_PARALLEL_GROUP_ROWS = 1 << 21


def hash_groups(key_hashes: np.ndarray, row_hashes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows ordered by (key hash, row hash), or by `key_hashes` alone, with where each
    run of equal hashes starts in that order. One compiled call (runtime/native) for a
    batch; polars' multithreaded sort for a large one."""
    if len(key_hashes) < _PARALLEL_GROUP_ROWS:
        return spine.sort_groups(key_hashes, key_hashes if row_hashes is None else row_hashes)
    if row_hashes is None:
        order = argsort_hashes(key_hashes)
    else:
        pairs = pl.DataFrame({"k": key_hashes, "r": row_hashes})
        order = pairs.select(pl.arg_sort_by(["k", "r"])).to_series().to_numpy().astype(np.int64)
    first = np.empty(len(order), dtype=bool)
    first[0] = True
    k = key_hashes[order]
    first[1:] = k[1:] != k[:-1]
    if row_hashes is not None:
        r = row_hashes[order]
        first[1:] |= r[1:] != r[:-1]
    return order, np.flatnonzero(first)


def groups_hold_equal_rows(columns: Sequence[pl.Series], order: np.ndarray, starts: np.ndarray) -> bool:
    """Whether every row of each group (rows order[starts[g]:starts[g+1]]) equals the
    group's first row: hashes that agree are a guess, this is the check."""
    if len(starts) == len(order):
        return True
    first = np.zeros(len(order), dtype=bool)
    first[starts] = True
    later = ~first
    reps = order[starts]
    return rows_equal(columns, order[later], columns, reps[(np.cumsum(first) - 1)[later]])


def group_rows(columns: Sequence[pl.Series]) -> RowGroups:
    """Group equal rows of `columns` (non-empty) by sorting a 64-bit row hash in numpy.

    A polars group-by costs ~0.3-1 ms per call whatever the size, and a step groups
    dozens of small batches. Equal hashes are checked to be equal rows, with NULL = NULL,
    NaN = NaN and -0.0 = 0.0 as in polars' group-by (and the hash); when two different
    rows share a hash, polars' group-by groups them instead, so the grouping is exact."""
    hashes = hash_rows(columns)
    return _checked_groups(columns, hashes, *hash_groups(hashes))


def _checked_groups(
    columns: Sequence[pl.Series], hashes: np.ndarray, order: np.ndarray, starts: np.ndarray
) -> RowGroups:
    """The rows grouped by their sorted hashes (`hash_groups`), once each group is checked
    to hold equal rows; else polars' exact group-by."""
    if not groups_hold_equal_rows(columns, order, starts):
        exact = _group_rows_by_polars(columns)
        return RowGroups(exact.order, exact.starts, exact.reps, hashes)
    return RowGroups(order, starts, order[starts], hashes)


def _group_rows_by_polars(columns: Sequence[pl.Series]) -> RowGroups:
    """group_rows through polars' group-by: exact whatever the hashes."""
    names = [f"k{i}" for i in range(len(columns))]
    frame = pl.DataFrame([c.alias(n) for c, n in zip(columns, names, strict=True)]).with_row_index("__row")
    members = frame.group_by(names, maintain_order=False).agg(pl.col("__row")).get_column("__row")
    sizes = members.list.len().to_numpy().astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    order = members.explode().to_numpy().astype(np.int64)
    return RowGroups(order, starts, order[starts])


def consolidate_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Z-set normal form of a non-empty frame (c0.., w with at least one column): sum the
    weights of equal rows, drop zero weights (through `group_rows`)."""
    return consolidate_frame_hashed(frame)[0]


# polars' number dtypes but DECIMAL and the 128-bit integers (numpy has none: their
# to_numpy raises), read off its classes once: a column's test is then a set lookup, not
# four calls into polars (a step of pydbsp's join tested ~20 columns).
PLAIN_NUMBER_DTYPES: frozenset[type] = frozenset(
    t
    for t in vars(pl).values()
    if isinstance(t, type) and issubclass(t, pl.DataType) and t.is_numeric() and t.__name__ not in ("Int128", "UInt128")
) - {pl.Decimal}


def is_plain_number(column: pl.Series) -> bool:
    """A non-decimal number column without NULLs: numpy holds and compares it as
    `rows_equal` does (NaN = NaN, -0.0 = 0.0)."""
    return type(column.dtype) in PLAIN_NUMBER_DTYPES and not column.null_count()


def _plain_bytes(columns: Sequence[pl.Series]) -> list[np.ndarray] | None:
    """Columns of plain numbers without NULLs as C-contiguous (rows, width) bytes, what
    `spine.sum_groups` compares (a column in chunks copied into one); None if one is of
    another kind."""
    views: list[np.ndarray] = []
    for column in columns:
        if not is_plain_number(column):
            return None
        values = column.to_numpy()
        views.append(values.view(np.uint8).reshape(len(values), values.itemsize))
    return views


def consolidate_frame_hashed(frame: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """`consolidate_frame`, and `hash_rows` of the rows it keeps (their columns c0..)."""
    columns = frame.get_columns()
    if columns[-1].name != WEIGHT:
        raise ValueError(f"a Z-set frame ends with its weight column, not {columns[-1].name!r}")
    weights = columns[-1].to_numpy()
    hashes = hash_rows(columns[:-1])
    order, starts = hash_groups(hashes)
    if len(starts) == len(order):  # every row alone
        if weights.all():
            # in one chunk, as the other paths' gathers leave it: the operators after
            # read a chunk's numpy view (a chunked change of 1,000 rows sent each of a
            # join's gathers through polars, ~0.2 ms, for a ~15 us copy here)
            return one_chunk(frame), hashes
        kept = np.flatnonzero(weights)
        return take(frame, kept), hashes[kept]
    plain = _plain_bytes(columns[:-1])
    summed = spine.sum_groups(order, starts, plain, weights) if plain is not None else None
    if summed is not None:  # the groups checked and summed in one compiled pass
        rows, sums = summed
        return take_weighted(frame, rows, sums), hashes[rows]
    groups = _checked_groups(columns[:-1], hashes, order, starts)
    sums = groups.sums(weights)
    keep = sums != 0
    data = pl.DataFrame(columns[:-1])
    reps = groups.reps[keep]
    return take(data, reps).hstack([int64_series(WEIGHT, sums[keep])]), hashes[reps]


def rows_equal(
    left: Sequence[pl.Series], left_rows: np.ndarray | None, right: Sequence[pl.Series], right_rows: np.ndarray
) -> bool:
    """Whether row left_rows[i] of the `left` columns equals row right_rows[i] of the
    `right` ones, for every i (None: all left rows in order). Equal as in polars'
    group-by: NULL = NULL, NaN = NaN, -0.0 = 0.0. Plain numeric columns compare in
    numpy; the others through polars."""
    for a, b in zip(left, right, strict=True):
        dtype = a.dtype  # (a property that builds a new object each time)
        same = dtype == b.dtype
        if same and isinstance(dtype, pl.Decimal):
            wa, wb = decimal_words(a), decimal_words(b)
            if wa is not None and wb is not None:
                if not _words_equal(wa, left_rows, wb, right_rows):
                    return False
                continue
        if same and type(dtype) in PLAIN_NUMBER_DTYPES:
            if not (a.null_count() or b.null_count()):
                va, vb = a.to_numpy(), b.to_numpy()
                va = va if left_rows is None else va[left_rows]
                if not np.array_equal(va, vb[right_rows], equal_nan=dtype.is_float()):
                    return False
                continue
        ga = a if left_rows is None else take_series(a, left_rows)
        if not ga.equals(take_series(b, right_rows)):
            return False
    return True


def decimal_words(column: pl.Series) -> tuple[np.ndarray, np.ndarray | None] | None:
    """A DECIMAL column's decimal128 slots as (n, 2) int64 words, viewed in its Arrow
    buffer (no copy), and its validity (None: no NULLs); None if Arrow holds it otherwise."""
    array = arrow_of(column)
    if not pa.types.is_decimal128(array.type):
        return None
    words = np.frombuffer(array.buffers()[1], dtype=np.int64).reshape(-1, 2)[array.offset : array.offset + len(array)]
    return words, (column.is_not_null().to_numpy() if column.null_count() else None)


def _words_equal(
    a: tuple[np.ndarray, np.ndarray | None],
    a_rows: np.ndarray | None,
    b: tuple[np.ndarray, np.ndarray | None],
    b_rows: np.ndarray,
) -> bool:
    """Slot by slot equality of two decimal columns' words, NULL equal to NULL only (a
    NULL slot's words are undefined)."""
    (wa, va), (wb, vb) = a, b
    wa = wa if a_rows is None else wa[a_rows]
    same = (wa == wb[b_rows]).all(axis=1)
    if va is None and vb is None:
        return bool(same.all())
    na = np.ones(len(same), dtype=bool) if va is None else (va if a_rows is None else va[a_rows])
    nb = np.ones(len(same), dtype=bool) if vb is None else vb[b_rows]
    return bool(((na == nb) & (same | ~na)).all())


def sort_key(value: Any) -> tuple[int, Any]:
    """A total order over SQL values of one column: NULL first, then by value."""
    if value is None:
        return (0, 0)
    if isinstance(value, float) and value != value:  # NaN sorts last, as in Spark
        return (2, 0)
    if isinstance(value, (_dt.date, FarDate)):  # a column may hold both
        return (1, FarDate.number(value))
    if isinstance(value, (_dt.date, _dt.datetime, _decimal.Decimal, str, bool, int, float)):
        return (1, value)
    if isinstance(value, list):  # an ARRAY: element by element, a prefix first
        return (1, tuple(sort_key(v) for v in value))
    return (1, str(value))


_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_DAY = _EPOCH.date().toordinal()


@dataclass(frozen=True, slots=True)
class FarDate:
    """A DATE (days) or TIMESTAMP (microseconds, `timestamp`) outside Python's years
    1-9999, which Spark holds and prints (`+10233-07-23`, `-0044-03-15`) but
    datetime cannot; to_rows gives one in place of a date or datetime."""

    value: int
    timestamp: bool

    def __str__(self) -> str:
        days, micros = divmod(self.value, 86_400_000_000) if self.timestamp else (self.value, 0)
        year, month, day = _civil(days)
        sign = "+" if year > 9999 else "-" if year < 0 else ""
        text = f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"
        if not self.timestamp:
            return text
        seconds, fraction = divmod(micros, 1_000_000)
        clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return f"{text} {clock}" + (f".{fraction:06d}" if fraction else "")

    @staticmethod
    def number(value: _dt.date | FarDate) -> int:
        """Days of a date, microseconds of a datetime, since 1970-01-01."""
        if isinstance(value, FarDate):
            return value.value
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:  # an instant (an oracle's TIMESTAMPTZ): its UTC time
                value = value.astimezone(_dt.UTC).replace(tzinfo=None)
            return (value - _EPOCH) // _dt.timedelta(microseconds=1)
        return value.toordinal() - _EPOCH_DAY


def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number since 1970-01-01 in the proleptic Gregorian
    calendar, for any year (year 0 is 1 BCE): the era arithmetic of days_from_civil."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


# Python's datetime holds years 1..9999: these bound the days and microseconds it can.
_MIN_DAY, _MAX_DAY = _dt.date(1, 1, 1).toordinal() - _EPOCH_DAY, _dt.date(9999, 12, 31).toordinal() - _EPOCH_DAY
_MIN_MICROS, _MAX_MICROS = _MIN_DAY * 86_400_000_000, (_MAX_DAY + 1) * 86_400_000_000 - 1


def _python_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with each DATE or TIMESTAMP column that holds a value outside Python's
    years replaced by Python objects: dates, datetimes and FarDates."""
    replaced = []
    for name, dtype in frame.schema.items():
        if dtype == pl.Date:
            low, high, timestamp = _MIN_DAY, _MAX_DAY, False
        elif isinstance(dtype, pl.Datetime):
            low, high, timestamp = _MIN_MICROS, _MAX_MICROS, True
        else:
            continue
        numbers = frame[name].to_physical() if not timestamp else frame[name].dt.cast_time_unit("us").to_physical()
        if numbers.null_count() == len(numbers) or (low <= numbers.min() and numbers.max() <= high):  # type: ignore[operator]
            continue
        values = [
            None if n is None else FarDate(n, timestamp) if not low <= n <= high else _python_value(n, timestamp)
            for n in numbers.to_list()
        ]
        replaced.append(pl.Series(name, values, dtype=pl.Object))
    return frame.with_columns(replaced) if replaced else frame


def _python_value(n: int, timestamp: bool) -> _dt.date:
    if timestamp:
        return _EPOCH + _dt.timedelta(microseconds=n)
    return _dt.date.fromordinal(n + _EPOCH_DAY)

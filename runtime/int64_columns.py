"""Columns as int64 arrays, for the compiled kernels that hold rows as int64s (the
recursion loop, runtime/nested_compiled.py; the MIN/MAX index, runtime/kernels/
extrema_index.py; a linear aggregate's group table, runtime/kernels/group_sums.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.logical.aggregate import ordered_as_int64
from dbspc.compiler.types import SqlType
from dbspc.runtime.native import iterscope
from dbspc.runtime.zset import arrow_of, decimal_of_int64, decimal_words, polars_dtype


def int64_column(column: pl.Series, t: SqlType, strings: iterscope.Dictionary) -> np.ndarray | None:
    """A column without NULLs as int64s: integers and BOOLEAN as their values, DATE and
    TIMESTAMP as their physical values, DECIMAL(p <= 18) unscaled, STRING as its code in
    `strings` (codes keep equality, not order); None for other kinds."""
    if t.kind == "STRING":
        array = arrow_of(column)
        if not (pa.types.is_large_string(array.type) or pa.types.is_string(array.type)):
            array = array.cast(pa.large_string())
        buffers = array.buffers()
        data = buffers[2] if buffers[2] is not None else b""
        wide = pa.types.is_large_string(array.type)
        codes: np.ndarray = strings.encode(buffers[1], data, wide, array.offset, len(array))
        return codes
    if not ordered_as_int64(t):
        return None
    if t.kind == "DECIMAL":
        read = decimal_words(column)
        # up to 18 digits the low word of the decimal128 is the unscaled value
        return None if read is None else np.ascontiguousarray(read[0][:, 0])
    if t.kind == "BOOLEAN":
        return column.cast(pl.Int64).to_numpy()
    # a DATE's or TIMESTAMP's datetime64 holds its physical value (to_physical is a polars
    # query, ~0.1 ms)
    values: np.ndarray = column.to_numpy()
    return values.view(np.int64) if values.dtype.kind == "M" else values


def int64_keys(
    columns: Sequence[pl.Series], types: Sequence[SqlType], strings: iterscope.Dictionary, n: int
) -> np.ndarray | None:
    """n rows of key columns as int64 words, two a column: its value (`int64_column`;
    0 for a NULL) and 1 if NULL, so that NULL keys equal each other and no value. No
    columns: one word, 0 (every row in one group). None for a kind `int64_column` has no
    image for."""
    if not types:
        return np.zeros((n, 1), dtype=np.int64)
    rows = np.empty((n, 2 * len(types)), dtype=np.int64)
    for j, (column, t) in enumerate(zip(columns, types, strict=True)):
        nulls = column.null_count()
        values = int64_column(_filled(column, t) if nulls else column, t, strings)
        if values is None:
            return None
        rows[:, 2 * j] = values
        rows[:, 2 * j + 1] = column.is_null().to_numpy() if nulls else 0
        if nulls:  # a NULL's slot may hold anything
            rows[:, 2 * j] *= 1 - rows[:, 2 * j + 1]
    return rows


def series_of_int64(
    name: str, values: np.ndarray, present: np.ndarray, t: SqlType, strings: iterscope.Dictionary
) -> pl.Series:
    """The column of type `t` whose `int64_column` images are `values`, NULL where not
    `present` (a string by its code in `strings`)."""
    if t.kind == "DECIMAL":
        return decimal_of_int64(name, values, present, t.precision or 38, t.scale or 0)
    if t.kind == "STRING":
        # (a NULL's code is 0, as `int64_keys` gives it, so it decodes to some string)
        offsets, data = strings.decode(np.ascontiguousarray(values, dtype=np.int64))
        text = pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))
        column = pl.Series(name, text).cast(pl.String)
    elif t.kind == "BOOLEAN":
        column = pl.Series(name, values != 0)
    else:
        column = pl.Series(name, values)
        if polars_dtype(t) != pl.Int64:
            column = column.cast(polars_dtype(t))
    return column if present.all() else column.scatter(np.flatnonzero(~present), None)


def _filled(column: pl.Series, t: SqlType) -> pl.Series:
    """A key column's NULLs replaced by some value (the key's NULL flag tells them apart)."""
    if t.kind == "DECIMAL":
        return column  # its words are read as they are, and a NULL's zeroed
    if t.kind == "BOOLEAN":
        return column.fill_null(False)
    if t.kind == "STRING":
        return column.fill_null("")
    return column.to_physical().fill_null(0)

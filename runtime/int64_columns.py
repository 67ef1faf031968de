"""Columns as int64 arrays, for the compiled kernels that hold rows as int64s (the
recursion loop, runtime/nested_compiled.py; the MIN/MAX index, runtime/kernels/
extrema_index.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.logical.aggregate import ordered_as_int64
from dbspc.compiler.types import SqlType
from dbspc.runtime.native import iterscope
from dbspc.runtime.zset import arrow_of, decimal_words


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

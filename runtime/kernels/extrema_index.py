"""An incremental MIN/MAX's values ordered per group, in compiled code (native/extrema.h).

The aggregate (runtime/kernels/aggregate.py) keeps each group's multiset of values in a
trace ordered by hash, the state of record for checkpoints. Reading a group's new MIN
from it after its old MIN is deleted costs the whole group. This index holds the same
multisets ordered by value, so a step finds every touched group's new extremes in
O(|change| log |group|): `extremes` before the commit, `apply` at it. It is derived
state: loaded from the trace when first used (and after a restore), dropped for good if
it ever disagrees with a change, and counted in the operator's state bytes.

Rows are int64: the key columns each as (value, is NULL), strings by their code in the
index's dictionary (keys are only compared for equality); the aggregated values in
their column's order (integers, DECIMAL(p <= 18) unscaled, DATE and TIMESTAMP by their
physical value, BOOLEAN as 0/1), never NULL (MIN and MAX skip NULLs before the
multiset). Other kinds (floats, wide decimals, strings as values) have no index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.logical.aggregate import has_ordered_index
from dbspc.compiler.types import SqlType
from dbspc.runtime.int64_columns import int64_column
from dbspc.runtime.native import extrema, iterscope
from dbspc.runtime.zset import polars_dtype


class ExtremaIndex:
    """Per group (`key_types`), its values of `value_type` in order with their counts."""

    def __init__(self, key_types: Sequence[SqlType], value_type: SqlType) -> None:
        self.key_types = tuple(key_types)
        self.value_type = value_type
        self.strings = iterscope.Dictionary()
        # no key columns (a global MIN): one group, keyed by a constant
        self.index = extrema.Index(max(2 * len(self.key_types), 1))

    @staticmethod
    def supports(key_types: Sequence[SqlType], value_type: SqlType) -> bool:
        return has_ordered_index(key_types, value_type)

    def keys(self, columns: Sequence[pl.Series], n: int) -> np.ndarray | None:
        """The int64 key rows of n rows (None: a column Arrow holds otherwise)."""
        if not self.key_types:
            return np.zeros((n, 1), dtype=np.int64)
        rows = np.empty((n, 2 * len(self.key_types)), dtype=np.int64)
        for j, (column, t) in enumerate(zip(columns, self.key_types, strict=True)):
            nulls = column.null_count()
            values = int64_column(_filled(column, t) if nulls else column, t, self.strings)
            if values is None:
                return None
            rows[:, 2 * j] = values
            rows[:, 2 * j + 1] = column.is_null().to_numpy() if nulls else 0
            if nulls:  # a NULL's slot may hold anything
                rows[:, 2 * j] *= 1 - rows[:, 2 * j + 1]
        return rows

    def values(self, column: pl.Series) -> np.ndarray | None:
        """The int64 images of a column without NULLs."""
        values = int64_column(column, self.value_type, self.strings)
        return None if values is None else np.ascontiguousarray(values, dtype=np.int64)

    def series(self, name: str, values: np.ndarray, present: np.ndarray) -> pl.Series:
        """The values of int64 images, NULL where not `present`."""
        t = self.value_type
        if t.kind == "DECIMAL":
            words = np.empty((len(values), 2), dtype=np.int64)
            words[:, 0] = values
            words[:, 1] = values >> 63
            validity = None if present.all() else pa.py_buffer(np.packbits(present, bitorder="little"))
            array = pa.Array.from_buffers(
                pa.decimal128(t.precision or 38, t.scale or 0), len(values), [validity, pa.py_buffer(words)]
            )
            return pl.Series(name, array)
        column = pl.Series(name, values)
        if t.kind == "BOOLEAN":
            column = pl.Series(name, values != 0)
        elif polars_dtype(t) != pl.Int64:
            column = column.cast(polars_dtype(t))
        return column if present.all() else column.scatter(np.flatnonzero(~present), None)

    def load(self, keys: Sequence[pl.Series], values: pl.Series, weights: np.ndarray) -> bool:
        """Fill from the trace's rows; False when they cannot be held."""
        n = len(weights)
        k, v = self.keys(keys, n), self.values(values)
        return k is not None and v is not None and self.index.apply(k, v, np.ascontiguousarray(weights, np.int64))

    def nbytes(self) -> int:
        return int(self.index.nbytes())


def _filled(column: pl.Series, t: SqlType) -> pl.Series:
    """A key column's NULLs replaced by some value (the key's NULL flag tells them apart)."""
    if t.kind == "DECIMAL":
        return column  # its words are read as they are, and a NULL's zeroed
    if t.kind == "BOOLEAN":
        return column.fill_null(False)
    if t.kind == "STRING":
        return column.fill_null("")
    return column.to_physical().fill_null(0)



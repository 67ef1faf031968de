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

from dbspc.compiler.logical.aggregate import has_ordered_index
from dbspc.compiler.types import SqlType
from dbspc.runtime.int64_columns import int64_column, int64_keys, series_of_int64
from dbspc.runtime.native import extrema, iterscope


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
        return int64_keys(columns, self.key_types, self.strings, n)

    def values(self, column: pl.Series) -> np.ndarray | None:
        """The int64 images of a column without NULLs."""
        values = int64_column(column, self.value_type, self.strings)
        return None if values is None else np.ascontiguousarray(values, dtype=np.int64)

    def series(self, name: str, values: np.ndarray, present: np.ndarray) -> pl.Series:
        """The values of int64 images, NULL where not `present`."""
        return series_of_int64(name, values, present, self.value_type, self.strings)

    def load(self, keys: Sequence[pl.Series], values: pl.Series, weights: np.ndarray) -> bool:
        """Fill from the trace's rows; False when they cannot be held."""
        n = len(weights)
        k, v = self.keys(keys, n), self.values(values)
        return k is not None and v is not None and self.index.apply(k, v, np.ascontiguousarray(weights, np.int64))

    def nbytes(self) -> int:
        return int(self.index.nbytes())

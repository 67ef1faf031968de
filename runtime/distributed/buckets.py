"""Which bucket a row belongs to, the same in every process that computes it.

A row goes to bucket hash(its key columns) mod B. Both sides of a join are bucketed by
their own key columns and must agree on equal keys whatever the columns' types (an INT
key meets a BIGINT one, DECIMAL(10,2) meets DECIMAL(12,2)), so numbers are hashed as
the DOUBLE of their value (-0.0 as 0.0, every NaN alike). Equal values then always
share a bucket; unequal ones may too, which only costs balance, never correctness.
polars' seeded row hash is the same in every process of one polars version, and the
driver and the executors run the same environment.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from dbspc.runtime.distributed.plan import SINGLE, Part
from dbspc.runtime.zset import ZSet, col_name

BUCKET_SEED = 0x5EED_B0C7
_NUMBERS = {"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL"}


def bucket_of(z: ZSet, to: Part, buckets: int) -> np.ndarray:
    """The bucket of each row of `z` under partitioning `to` (hash or single)."""
    if to == SINGLE or buckets == 1 or z.frame.height == 0:
        return np.zeros(z.frame.height, dtype=np.int64)
    if to.kind != "hash":
        raise ValueError(f"rows cannot be moved to a partitioning '{to}'")
    keys: list[pl.Series] = []
    for c in to.cols:
        column = z.frame.get_column(col_name(c))
        if z.types[c].kind in _NUMBERS:
            column = column.cast(pl.Float64).fill_nan(float("nan")) + 0.0
        keys.append(column.alias(f"k{len(keys)}"))
    hashes = pl.DataFrame(keys).hash_rows(seed=BUCKET_SEED).to_numpy()
    return (hashes % np.uint64(buckets)).astype(np.int64)


def split(z: ZSet, to: Part | None, here: int, buckets: int) -> dict[int, ZSet]:
    """`z`'s rows by the bucket they go to; `to` None keeps them in bucket `here`."""
    if z.frame.height == 0:
        return {}
    if to is None:
        return {here: z}
    ids = bucket_of(z, to, buckets)
    if not ids.any():
        return {0: z}
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    ends = np.r_[starts[1:], len(order)]
    frame = z.frame[order]
    return {int(sorted_ids[s]): ZSet(frame[int(s) : int(e)], z.types) for s, e in zip(starts, ends, strict=True)}


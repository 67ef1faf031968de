"""Hash collisions on demand: the traces, joins, aggregates and consolidation order rows
by 64-bit hashes, and must stay exact when different rows share one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import polars as pl
import pytest

from dbspc.runtime import zset
from dbspc.runtime.native import extrema, groupsums, iterscope
from dbspc.runtime.trace import settle_owed


@contextmanager
def colliding_hashes(values: int | None = 2) -> Iterator[None]:
    """Within the block, every row hash (runtime/zset.py `hash_rows`, polars' hash_rows
    for the operators that still use it, the compiled recursion's, runtime/native/
    iterscope.h, the MIN/MAX index's, extrema.h, and the group table's, groupsums.h)
    takes one of `values` values (1: all equal; None: hashes as they are)."""
    if values is None:
        yield
        return
    real = pl.DataFrame.hash_rows

    def reduced(self: pl.DataFrame, seed: int = 0, **kw: Any) -> pl.Series:
        return real(self, seed) % values

    settle_owed()  # (merges owed by earlier steps hash as they were made)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pl.DataFrame, "hash_rows", reduced)
        mp.setattr(zset, "_collide", values)
        iterscope.set_collisions(values)
        extrema.set_collisions(values)
        groupsums.set_collisions(values)
        try:
            yield
        finally:
            settle_owed()  # (and the block's own, before the hashes change back)
            iterscope.set_collisions(0)
            extrema.set_collisions(0)
            groupsums.set_collisions(0)

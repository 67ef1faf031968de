"""A linear aggregate's running sums per group, in a compiled hash table (native/groupsums.h).

COUNT and SUM are linear (DBSP §7.2: (↑Agg)^Δ = ↑Agg for a linear Agg), so a group's
new sums are its old sums plus the change's. The aggregate (runtime/kernels/aggregate.py)
keeps those sums in a trace keyed by group, the state of record for checkpoints. Before
this table, every step probed that trace for the touched groups and inserted their old
rows (-1) and new rows (+1) into it: a run made and merged each step, the largest part of
a join + GROUP BY step. The table is read and added to in place instead, one compiled
call each; the trace hears of the changes only when someone reads it (`sync`: a
checkpoint, a fallback to the general path) or when the keys of removed groups pile up.

Keys are int64 words (`int64_keys`: each column as its value and a NULL flag, a string by
its code in this table's dictionary), compared exactly. Sums are int64: the aggregate
leaves this path (`drop`) before one could leave int64.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from dbspc.compiler.logical.aggregate import ordered_as_int64
from dbspc.compiler.types import SqlType
from dbspc.runtime.int64_columns import int64_keys, series_of_int64
from dbspc.runtime.native import groupsums, iterscope
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet, col_name, concat_frames, frame_of

# The trace hears of removed groups once this many (or as many as the live groups, if
# more) wait: their keys are the only part of the table's backlog that is not bounded
# by its live groups.
_REMOVED_BACKLOG = 1 << 16

# The trace's rows of some groups, from their key columns and their sums (n first).
StateFrame = Callable[[list[pl.Series], np.ndarray], pl.DataFrame]


class GroupSums:
    """Per group (`key_types`), `sums` int64 running sums, the first its row count."""

    def __init__(self, key_types: Sequence[SqlType], sums: int) -> None:
        self.key_types = tuple(key_types)
        self.strings = iterscope.Dictionary()
        self.width = max(2 * len(self.key_types), 1)  # key words a group
        self.table = groupsums.Table(self.width, sums)
        self.removed = 0  # groups removed since the trace last heard

    @staticmethod
    def supports(key_types: Sequence[SqlType]) -> bool:
        return bool(key_types) and all(ordered_as_int64(t) or t.kind == "STRING" for t in key_types)

    def keys(self, columns: Sequence[pl.Series]) -> np.ndarray | None:
        """The int64 key rows of the groups' key columns (None: a kind with no image)."""
        return int64_keys(columns, self.key_types, self.strings, len(columns[0]))

    def gather(self, keys: np.ndarray, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A change's rows (int64 key rows, and each row's sums to add) grouped, with the
        groups' sums now: (reps, deltas, held, sums), per group in the order first seen
        its first row, its rows' parts summed, whether it is held and its sums (zeros if
        not). The caller keeps the parts' sums inside int64."""
        return self.table.gather(keys, np.ascontiguousarray(parts, dtype=np.int64))

    def add(self, keys: np.ndarray, deltas: np.ndarray, removed: int) -> None:
        """sums += deltas (distinct groups); `removed`: how many of them this removes."""
        self.table.add(keys, np.ascontiguousarray(deltas, dtype=np.int64))
        self.removed += removed

    def backlogged(self) -> bool:
        return self.removed >= max(_REMOVED_BACKLOG, len(self.table))

    def sync(self, trace: Trace, state_frame: StateFrame) -> None:
        """Bring `trace` up to the table: the changed groups' stored rows out, their rows
        now in (a removed group's row only out). O(changed groups · log |trace|)."""
        keys, sums, gone = self.table.drain()
        self.removed = 0
        touched = np.concatenate([keys, gone]) if len(gone) else keys
        if not len(touched):
            return
        columns = self.columns(touched)
        probe = frame_of([c.alias(col_name(j)) for j, c in enumerate(columns)])
        out = ZSet(trace.lookup(probe, probe.columns), trace.types).negate()
        held = state_frame([c.head(len(keys)) for c in columns], sums) if len(keys) else None
        trace.insert(ZSet(concat_frames([out.frame, held]), trace.types) if held is not None else out)

    def load(self, columns: Sequence[pl.Series], sums: np.ndarray) -> bool:
        """Fill an empty table from the trace's groups (distinct); False if a key has no image."""
        keys = self.keys(columns) if len(sums) else np.zeros((0, self.width), dtype=np.int64)
        if keys is None:
            return False
        self.table.add(keys, np.ascontiguousarray(sums, dtype=np.int64), False)
        return True

    def columns(self, keys: np.ndarray) -> list[pl.Series]:
        """The key columns of int64 key rows."""
        return [
            series_of_int64(col_name(j), keys[:, 2 * j], keys[:, 2 * j + 1] == 0, t, self.strings)
            for j, t in enumerate(self.key_types)
        ]

    def __len__(self) -> int:
        return len(self.table)

    def nbytes(self) -> int:
        return int(self.table.nbytes())

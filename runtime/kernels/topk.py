"""Top-k (ROW_NUMBER <= k per partition) with a change cost bounded by k, not by the partition.

State: the input integral, as a few sorted runs (a spine, as `runtime/trace.py`, but
ordered for reading a partition's first rows). Each run holds distinct rows sorted by
(partition hash, partition columns, ORDER BY keys, all other columns) — the window
kernel's order, so ties fall the same way — their weights in a numpy array beside it
(0 marks a tombstone) and a second index by full-row hash. The runs are disjoint: a
change to a row some run holds only changes its weight there (found by binary search
on the row hash); the other rows of a change form a new run, and the newest run merges
into the previous one while that one is at most 4 times larger, so there are O(log n)
runs and each row is re-sorted O(log n) times. A run that is half tombstones drops them.

For a changed partition P (a contiguous range of every run, found by binary search on
the hash column) with T = limit, each run's first rows of P up to T that are live after
the change and before it, and P's change, decide P's first T rows. The change's rows are
found in each run before reading (by row hash), so a run knows which of its rows lose
or regain weight. A row past a run's cut-off sorts after T rows live both before and
after the change, so it is in neither the old nor the new first T; every row before the cut-off
is read with all its weight. The step emits topk(new) − topk(old) over those rows only:
O(T + the change's rows among them) per run and changed partition, however many rows
the change deletes elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.errors import InternalCompilerError
from dbspc.compiler.logical.plan import OrderKey, WindowCall
from dbspc.compiler.types import SqlType
from dbspc.runtime.kernels.distinct import positive_part
from dbspc.runtime.kernels.window import window
from dbspc.runtime.registry import Context, Setup, Value, as_zset, evaluates
from dbspc.runtime.trace import Trace, _gather_ranges
from dbspc.runtime.zset import (
    WEIGHT,
    ZSet,
    col_name,
    concat_frames,
    int64_series,
    pick,
    rows_equal,
    schema_of,
)
from dbspc.runtime.zset import (
    take as take_rows,
)

_H = "__h"  # hash of the partition columns
_PART_SEED = 0x70C4
_ROW_SEED = 0x70C5
# Merge the newest run into the previous one while that is at most this many times larger.
_MERGE_FACTOR = 4


def _weighted(frame: pl.DataFrame, weights: np.ndarray) -> pl.DataFrame:
    """Rows c0.. (a run's, gathered) with the weight column `weights` appended."""
    return frame.hstack([int64_series(WEIGHT, weights)])


def _row_number() -> tuple[WindowCall, ...]:
    return (WindowCall("row_number", SqlType("INT")),)


@dataclass(slots=True)
class _Run:
    """Distinct rows in index order, with weights (mutable; 0 is a tombstone)."""

    frame: pl.DataFrame  # c0..
    part_h: np.ndarray  # uint64 partition hashes, ascending
    weights: np.ndarray  # int64
    row_order: np.ndarray  # positions sorted by row hash
    row_sorted: np.ndarray  # the row hashes in that order
    dead: int = 0

    def live(self) -> pl.DataFrame:
        keep = np.flatnonzero(self.weights > 0)
        return _weighted(take_rows(self.frame, keep), self.weights[keep])


class TopKState:
    """The sorted integral of a top-k's input; `step` reads it, its commit writes it."""

    def __init__(
        self, types: tuple[SqlType, ...], partition: tuple[int, ...], order: tuple[OrderKey, ...], limit: int
    ) -> None:
        self._types = types
        self._partition = partition
        self._order = order
        self._limit = limit
        self._schema = schema_of(types)
        self._cols = [col_name(i) for i in range(len(types))]
        self._part = [col_name(p) for p in partition]
        order_cols = [col_name(k.index) for k in order]
        rest = [c for c in self._cols if c not in self._part and c not in order_cols]
        head = [_H] if self._part else []  # a global top-k has one partition: no hash to sort by
        self._by = [*head, *self._part, *order_cols, *rest]
        self._desc = [False] * (len(head) + len(self._part)) + [k.desc for k in order] + [False] * len(rest)
        self._nulls_last = (
            [False] * (len(head) + len(self._part)) + [not k.nulls_first for k in order] + [False] * len(rest)
        )
        self._runs: list[_Run] = []
        self._checkpoint: Trace | None = None

    # -- runs ------------------------------------------------------------------------

    def _part_hash(self, frame: pl.DataFrame) -> np.ndarray:
        if not self._part:
            return np.zeros(frame.height, dtype=np.uint64)
        return np.asarray(pick(frame, self._part).hash_rows(seed=_PART_SEED).to_numpy(), dtype=np.uint64)

    def _row_hash(self, frame: pl.DataFrame) -> np.ndarray:
        return np.asarray(pick(frame, self._cols).hash_rows(seed=_ROW_SEED).to_numpy(), dtype=np.uint64)

    def _run(self, live: pl.DataFrame) -> _Run:
        """A run of positive, distinct rows c0.., w."""
        if self._part:
            live = live.hstack([pl.Series(_H, self._part_hash(live))])
        live = live.sort(self._by, descending=self._desc, nulls_last=self._nulls_last)
        part_h = live[_H].to_numpy() if self._part else np.zeros(live.height, dtype=np.uint64)
        frame = pick(live, self._cols)
        row_hashes = self._row_hash(frame)
        order = np.argsort(row_hashes, kind="stable")
        weights = live[WEIGHT].to_numpy().astype(np.int64, copy=True)
        return _Run(frame, part_h, weights, order, row_hashes[order])

    def _without_tombstones(self, run: _Run) -> _Run:
        """The run's live rows, still sorted (a filter, no sort)."""
        keep = run.weights > 0
        new_pos = np.cumsum(keep) - 1
        order = run.row_order[keep[run.row_order]]
        return _Run(
            take_rows(run.frame, np.flatnonzero(keep)),
            run.part_h[keep],
            run.weights[keep],
            new_pos[order],
            run.row_sorted[keep[run.row_order]],
        )

    def _find(
        self, run: _Run, d: pl.DataFrame, by_hash: np.ndarray, hashes: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(indexes into d, positions in the run) of the rows of `d` the run holds, given
        d's row hashes in ascending order (`hashes`, made once for every run) and the
        order that sorts them (`by_hash`): ascending probes miss the cache less."""
        lo = np.searchsorted(run.row_sorted, hashes, side="left")
        hi = np.searchsorted(run.row_sorted, hashes, side="right")
        d_idx = np.repeat(by_hash, hi - lo)
        pos = run.row_order[_gather_ranges(lo, hi)]
        if d_idx.size == 0:
            return d_idx, pos
        # equal hashes need not mean equal rows: compare them (null-safe)
        a = take_rows(pick(d, self._cols), d_idx)
        b = take_rows(run.frame, pos)
        if rows_equal(a.get_columns(), None, b.get_columns(), np.arange(b.height)):
            return d_idx, pos  # the usual case: no two different rows share a hash
        same = pl.select(pl.all_horizontal([a[c].eq_missing(b[c]) for c in self._cols])).to_series().to_numpy()
        return d_idx[same], pos[same]

    def _prefix(self, run: _Run, hashes: np.ndarray, changed: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Positions of the first rows of each key's range holding `limit` rows live before
        and after the change (the whole range where partitions share a hash). `changed`: the run's
        positions that the change's rows hold, ascending, and the change's weights there."""
        at, dw = changed
        lo = np.searchsorted(run.part_h, hashes, side="left")
        hi = np.searchsorted(run.part_h, hashes, side="right")
        size = hi - lo
        want = self._limit
        take = np.minimum(size, want)
        if self._part:
            nonempty = np.flatnonzero(size > 0)
            first = take_rows(pick(run.frame, self._part), lo[nonempty])
            last = take_rows(pick(run.frame, self._part), hi[nonempty] - 1)
            mixed = first.select(pl.any_horizontal([pl.col(c).ne_missing(last[c]) for c in self._part])).to_series()
            whole = nonempty[mixed.to_numpy()]
            take[whole] = size[whole]
        while True:
            pos = _gather_ranges(lo, lo + take)
            before = run.weights[pos]
            counted = before > 0
            if at.size:  # and live after the change (a tombstone it revives is not live before)
                j = np.minimum(np.searchsorted(at, pos), at.size - 1)
                counted &= before + np.where(at[j] == pos, dw[j], 0) > 0
            # read further where too few rows are live both before and after the change
            live = np.bincount(np.repeat(np.arange(lo.size), take), weights=counted, minlength=lo.size)
            short = (live < want) & (take < size)
            if not short.any():
                # partitions sharing a hash share a range: read each row of it once
                return np.unique(pos) if bool((hashes[1:] == hashes[:-1]).any()) else pos
            take[short] = np.minimum(size[short], np.maximum(take[short] * 4, want + 1))

    # -- a step ----------------------------------------------------------------------

    def step(self, delta: ZSet) -> tuple[ZSet, Any]:
        out_types = (*self._types, SqlType("INT"))
        d = ZSet.from_frame(delta.frame, self._types).consolidate().frame
        if d.height == 0:
            return ZSet.empty(out_types), lambda: None
        keys = d.select(self._part).unique()  # no columns for a global top-k: one partition
        hashes = np.zeros(1, dtype=np.uint64)
        if self._part:
            hashes = self._part_hash(keys)
            order = np.argsort(hashes, kind="stable")
            keys, hashes = keys[order], hashes[order]

        # The change's rows that each run holds (a run holds distinct rows: once each).
        d_w = d[WEIGHT].to_numpy()
        row_h = self._row_hash(d)
        by_hash = np.argsort(row_h, kind="stable")
        found = [self._find(run, d, by_hash, row_h[by_hash]) for run in self._runs]

        parts = []
        for run, (d_idx, at) in zip(self._runs, found, strict=True):
            ascending = np.argsort(at, kind="stable")
            pos = self._prefix(run, hashes, (at[ascending], d_w[d_idx][ascending]))
            live = pos[run.weights[pos] > 0]
            parts.append(_weighted(take_rows(run.frame, live), run.weights[live]))
        gathered = concat_frames(parts) if parts else d.head(0)
        if self._part:
            gathered = gathered.join(keys, on=self._part, how="semi", nulls_equal=True)
        before = ZSet(gathered, self._types)
        after = positive_part(ZSet.concat([before, ZSet(d, self._types)], self._types))
        rn = _row_number()
        new = window(after, self._partition, self._order, rn, out_types, self._limit)
        old = window(before, self._partition, self._order, rn, out_types, self._limit)
        out = ZSet.concat([new, old.negate()], out_types).consolidate()

        rest = np.ones(d.height, dtype=bool)
        for d_idx, _ in found:
            rest[d_idx] = False
        fresh = take_rows(d, np.flatnonzero(rest))
        if fresh.height and not ZSet(fresh, self._types).is_positive():
            raise InternalCompilerError("top-k state would hold a row a negative number of times")

        def commit() -> None:
            for run, (d_idx, pos) in zip(self._runs, found, strict=True):
                old_w = run.weights[pos]
                new_w = old_w + d_w[d_idx]
                if new_w.size and int(new_w.min()) < 0:
                    raise InternalCompilerError("top-k state holds a row a negative number of times")
                run.weights[pos] = new_w
                run.dead += int((new_w == 0).sum()) - int((old_w == 0).sum())
            self._runs = [self._without_tombstones(r) if 2 * r.dead > r.frame.height else r for r in self._runs]
            self._runs = [r for r in self._runs if r.frame.height]
            if fresh.height:
                self._runs.append(self._run(fresh))
            runs = self._runs
            while len(runs) >= 2 and runs[-2].frame.height <= _MERGE_FACTOR * runs[-1].frame.height:
                newer, older = runs.pop(), runs.pop()
                runs.append(self._run(concat_frames([older.live(), newer.live()])))
            self._checkpoint = None

        return out, commit

    def _live(self) -> pl.DataFrame:
        """The integral: c0.., w (distinct rows, positive weights)."""
        frames = [r.live() for r in self._runs]
        return concat_frames(frames) if frames else ZSet.empty(self._types).frame

    # -- checkpoints: the integral, as one trace built when a checkpoint asks ------------

    def traces(self) -> dict[str, Trace]:
        if self._checkpoint is None:
            self._checkpoint = Trace(self._types, ())
            self._checkpoint.insert(ZSet(self._live(), self._types))
        return {"": self._checkpoint}

    def state_rows(self) -> int:
        return sum(r.frame.height for r in self._runs)

    def state_bytes(self) -> int:
        return sum(int(r.frame.estimated_size()) for r in self._runs)

    def meta(self) -> None:
        return None

    def restored(self, meta: object) -> None:
        if self._checkpoint is not None:
            live = self._checkpoint.snapshot().frame
            self._runs = [self._run(live)] if live.height else []


@evaluates(op.TopK)
def _topk(ctx: Context, o: op.TopK, args: list[Value]) -> Value:
    return window(as_zset(args[0]), o.partition, o.order, _row_number(), o.types, o.limit)


def _topk_state(setup: Setup) -> TopKState:
    o = setup.circuit[setup.node]
    assert isinstance(o, op.TopKIncremental)
    return TopKState(setup.circuit[o.inputs[0]].types, o.partition, o.order, o.limit)


@evaluates(op.TopKIncremental, state=_topk_state, state_name="topk")
def _topk_incremental(ctx: Context, o: op.TopKIncremental, args: list[Value]) -> Value:
    out, commit = ctx.state.step(as_zset(args[0]))
    ctx.commits.append(commit)
    return out

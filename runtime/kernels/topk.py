"""Top-k (ROW_NUMBER <= k per partition) with a change cost bounded by k, not by the partition.

State: the input integral, as an index for reading a partition's first rows.
`main` holds distinct rows sorted by (partition hash, partition columns, ORDER BY keys,
all other columns) — the window kernel's order, so ties fall the same way — with their
weights in a numpy array beside it, and a second index of the same rows by full-row
hash. `pending` holds the rows inserted since the last compaction that `main` does not
have, sorted the same way. A change to a row `main` has only changes its weight (a
delete can leave a zero-weight tombstone); other rows go to `pending`. A partition is a
contiguous range of each, found by binary search on the hash column.

For a changed partition P with T = limit and E the rows the change deletes from P, the
first rows of P's range in `main` up to T + E live ones, the first T + E rows of P in
`pending` and P's change decide P's first T rows: at most E of those rows lose weight,
so at least T live rows sort before each cut-off and every row before it is read with
all its weight. The step emits topk(new) − topk(old) over those rows only. Compaction
(one sort of the live rows) runs when `pending` passes n/64 rows or the tombstones
n/16, so its cost is amortised over the changes that caused it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from compiler.circuit import operators as op
from compiler.errors import InternalCompilerError
from compiler.logical.plan import OrderKey, WindowCall
from compiler.types import SqlType
from runtime.kernels.window import window
from runtime.registry import Context, Setup, Value, as_zset, evaluates
from runtime.trace import Trace, _gather_ranges
from runtime.zset import WEIGHT, ZSet, col_name, schema_of

_H = "__h"  # hash of the partition columns
_PART_SEED = 0x70C4
_ROW_SEED = 0x70C5
_MIN_PENDING = 4096  # compaction thresholds never go below this (small states never compact)


def _row_number() -> tuple[WindowCall, ...]:
    return (WindowCall("row_number", SqlType("INT")),)


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
        self._checkpoint: Trace | None = None
        self._reset(ZSet.empty(types).frame)

    # -- the sorted index ------------------------------------------------------------

    def _reset(self, live: pl.DataFrame) -> None:
        """Rebuild `main` from positive rows c0.., w (distinct); `pending` empty."""
        main = self._sorted(live)
        self._main = main.select(self._cols)
        self._main_h = self._part_hash(main)
        self._main_w = main[WEIGHT].to_numpy().astype(np.int64, copy=True)
        row_hashes = self._row_hash(main)
        self._row_order = np.argsort(row_hashes, kind="stable")
        self._row_sorted = row_hashes[self._row_order]
        self._dead = 0
        self._pending = main.head(0).select([*self._cols, WEIGHT])
        self._pend_h = self._main_h[:0]

    def _part_hash(self, frame: pl.DataFrame) -> np.ndarray:
        if not self._part:
            return np.zeros(frame.height, dtype=np.uint64)
        return np.asarray(frame.select(self._part).hash_rows(seed=_PART_SEED).to_numpy(), dtype=np.uint64)

    def _row_hash(self, frame: pl.DataFrame) -> np.ndarray:
        return np.asarray(frame.select(self._cols).hash_rows(seed=_ROW_SEED).to_numpy(), dtype=np.uint64)

    def _sorted(self, frame: pl.DataFrame) -> pl.DataFrame:
        if self._part:
            frame = frame.with_columns(pl.Series(_H, self._part_hash(frame)))
        frame = frame.sort(self._by, descending=self._desc, nulls_last=self._nulls_last)
        return frame.drop(_H) if self._part else frame

    def _find_in_main(self, d: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(indexes into d, positions in main) of the rows of `d` that `main` holds."""
        h = self._row_hash(d)
        lo = np.searchsorted(self._row_sorted, h, side="left")
        hi = np.searchsorted(self._row_sorted, h, side="right")
        counts = hi - lo
        d_idx = np.repeat(np.arange(d.height), counts)
        pos = self._row_order[_gather_ranges(lo, hi)]
        if d_idx.size == 0:
            return d_idx, pos
        # equal hashes need not mean equal rows: compare them (null-safe)
        a = d[d_idx].select(self._cols)
        b = self._main[pos]
        same = pl.select(pl.all_horizontal([a[c].eq_missing(b[c]) for c in self._cols])).to_series().to_numpy()
        return d_idx[same], pos[same]

    def _prefix_of(
        self, index_h: np.ndarray, hashes: np.ndarray, want: np.ndarray, weights: np.ndarray | None, frame: pl.DataFrame
    ) -> np.ndarray:
        """Positions of the first rows of each key's range holding `want` live rows (the
        whole range where partitions share a hash). `weights` None: every row is live."""
        lo = np.searchsorted(index_h, hashes, side="left")
        hi = np.searchsorted(index_h, hashes, side="right")
        size = hi - lo
        take = np.minimum(size, want)
        if self._part:
            nonempty = np.flatnonzero(size > 0)
            first = frame[lo[nonempty]].select(self._part)
            last = frame[hi[nonempty] - 1].select(self._part)
            mixed = first.select(pl.any_horizontal([pl.col(c).ne_missing(last[c]) for c in self._part])).to_series()
            whole = nonempty[mixed.to_numpy()]
            take[whole] = size[whole]
        while True:
            pos = _gather_ranges(lo, lo + take)
            if weights is None:
                return pos
            # tombstones do not count: read further where too few rows are live
            live = np.bincount(np.repeat(np.arange(lo.size), take), weights=weights[pos] > 0, minlength=lo.size)
            short = (live < want) & (take < size)
            if not short.any():
                return pos
            take[short] = np.minimum(size[short], np.maximum(take[short] * 4, want[short] + 1))

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
            deleted = d.filter(pl.col(WEIGHT) < 0).group_by(self._part).agg(pl.len().alias("__n"))
            joined = keys.join(deleted, on=self._part, how="left", nulls_equal=True, maintain_order="left")
            dels = joined["__n"].fill_null(0).to_numpy().astype(np.int64)
        else:
            dels = np.array([int((d[WEIGHT] < 0).sum())], dtype=np.int64)
        want = self._limit + dels

        main_pos = self._prefix_of(self._main_h, hashes, want, self._main_w, self._main)
        main_rows = self._main[main_pos].with_columns(pl.Series(WEIGHT, self._main_w[main_pos]))
        pend_pos = self._prefix_of(self._pend_h, hashes, want, None, self._pending)
        gathered = pl.concat([main_rows.filter(pl.col(WEIGHT) > 0), self._pending[pend_pos]], how="vertical")
        if self._part:
            gathered = gathered.join(keys, on=self._part, how="semi", nulls_equal=True)
        before = ZSet(gathered, self._types).consolidate()
        after = ZSet.concat([before, ZSet(d, self._types)], self._types).consolidate()
        after = ZSet(after.frame.filter(pl.col(WEIGHT) > 0), self._types)
        rn = _row_number()
        new = window(after, self._partition, self._order, rn, out_types, self._limit)
        old = window(before, self._partition, self._order, rn, out_types, self._limit)
        out = ZSet.concat([new, old.negate()], out_types).consolidate()

        d_idx, pos = self._find_in_main(d)
        d_w = d[WEIGHT].to_numpy()
        rest = np.ones(d.height, dtype=bool)
        rest[d_idx] = False

        def commit() -> None:
            old_w = self._main_w[pos]
            new_w = old_w + d_w[d_idx]
            if new_w.size and int(new_w.min()) < 0:
                raise InternalCompilerError("top-k state holds a row a negative number of times")
            self._main_w[pos] = new_w
            self._dead += int((new_w == 0).sum()) - int((old_w == 0).sum())
            if rest.any():
                pend = ZSet(pl.concat([self._pending, d.filter(pl.Series(rest))]), self._types).consolidate().frame
                if pend.height and not ZSet(pend, self._types).is_positive():
                    raise InternalCompilerError("top-k state holds a row a negative number of times")
                self._pending = self._sorted(pend)
                self._pend_h = self._part_hash(self._pending)
            self._checkpoint = None
            floor = max(_MIN_PENDING, self._main.height // 64)
            if self._pending.height > floor or self._dead > max(_MIN_PENDING, self._main.height // 16):
                self._reset(self._live())

        return out, commit

    def _live(self) -> pl.DataFrame:
        """The integral: c0.., w (distinct rows, positive weights)."""
        main = self._main.with_columns(pl.Series(WEIGHT, self._main_w)).filter(pl.col(WEIGHT) > 0)
        return pl.concat([main, self._pending], how="vertical")

    # -- checkpoints: the integral, as one trace built when a checkpoint asks ------------

    def traces(self) -> dict[str, Trace]:
        if self._checkpoint is None:
            self._checkpoint = Trace(self._types, ())
            self._checkpoint.insert(ZSet(self._live(), self._types))
        return {"": self._checkpoint}

    def state_rows(self) -> int:
        return self._main.height + self._pending.height

    def meta(self) -> None:
        return None

    def restored(self, meta: object) -> None:
        if self._checkpoint is not None:
            self._reset(self._checkpoint.snapshot().frame)


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

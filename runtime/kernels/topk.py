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

A global top-k (ORDER BY ... LIMIT, no partition) also keeps its integral's head: the
first H >= limit copies in order (H = max(_HEAD_MIN, _HEAD_FACTOR * limit)), sorted, or
the whole integral while it is smaller. Every row the head lacks sorts after its last
row, so where the change leaves at least `limit` copies of the head live, the new first
`limit` are among the head's rows and the change's: a step sorts those few hundred rows
and touches no run. The change waits in a pending list, folded into the runs in one
batch when it outgrows _FOLD_MIN rows and an eighth of the state, or when deletes empty
the head below `limit` and it must be read again from the runs. Only then does a step
pay the runs' hashing, probes and sorts, which cost ~10 ms a step at 200k rows where
DuckDB's whole recompute took 2.4 ms.
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
    argsort_hashes,
    col_name,
    concat_frames,
    decimal_words,
    hash_rows,
    int64_series,
    is_plain_number,
    pick,
    polars_dtype,
    rows_equal,
    schema_of,
)
from dbspc.runtime.zset import (
    take as take_rows,
)

_H = "__h"  # hash of the partition columns
_PART_SEED = 0x70C4
_AT = "__at"  # a row's place before a sort
# Merge the newest run into the previous one while that is at most this many times larger.
_MERGE_FACTOR = 4
# A global top-k's head holds at least this many copies (and this many times the limit),
# is cut back to that once it holds twice as many, and its pending changes fold into
# the runs past this many rows (tests force small values).
_HEAD_MIN = 64
_HEAD_FACTOR = 4
_FOLD_MIN = 16384
_MARK = "__mark"


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

    def live(self) -> tuple[pl.DataFrame, np.ndarray]:
        """The live rows (c0.., w) and their row hashes."""
        keep = np.flatnonzero(self.weights > 0)
        hashes = np.empty_like(self.row_sorted)
        hashes[self.row_order] = self.row_sorted
        return _weighted(take_rows(self.frame, keep), self.weights[keep]), hashes[keep]


def _row_hashes(z: ZSet) -> np.ndarray:
    """`hash_rows` of a batch's rows, which a consolidated one carries."""
    return z.key_hashes(range(len(z.types)))


def _int64_pair(column: pl.Series, last: pl.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """A column without NULLs and one value of its type as numpy numbers that compare as
    they do (decimals as their scaled integers, where those fit in int64); else None."""
    if is_plain_number(column):
        return column.to_numpy(), last.to_numpy()
    if not isinstance(column.dtype, pl.Decimal):
        return None
    words, bound = decimal_words(column), decimal_words(last)
    if words is None or bound is None:
        return None
    low, high = words[0][:, 0], words[0][:, 1]
    if not (np.array_equal(high, low >> 63) and int(bound[0][0, 1]) == int(bound[0][0, 0]) >> 63):
        return None  # some value needs the high word
    return low, bound[0][:, 0]


@dataclass(slots=True)
class _Head:
    """A global top-k's first rows: `frame` (c0.., distinct, in window order) with their
    positive `weights`, and the output integral `top` (its first `limit` copies numbered)."""

    frame: pl.DataFrame
    weights: np.ndarray
    bounded: bool  # the integral holds rows after the last (else the head is all of it)
    top: ZSet


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
        self._out_types = (*types, SqlType("INT"))
        self._depth = max(_HEAD_MIN, _HEAD_FACTOR * limit)  # a global top-k's head's copies
        # a global top-k's head (None: read it from the runs) and the changes the runs lack
        self._head: _Head | None = None
        self._pending: list[pl.DataFrame] = []
        self._pending_rows = 0

    # -- runs ------------------------------------------------------------------------

    def _part_hash(self, frame: pl.DataFrame) -> np.ndarray:
        if not self._part:
            return np.zeros(frame.height, dtype=np.uint64)
        return np.asarray(pick(frame, self._part).hash_rows(seed=_PART_SEED).to_numpy(), dtype=np.uint64)

    def _run(self, live: pl.DataFrame, row_hashes: np.ndarray | None = None) -> _Run:
        """A run of positive, distinct rows c0.., w (and their `hash_rows`, if known: a
        consolidated change's, or the merged runs')."""
        if row_hashes is None:
            row_hashes = hash_rows(live.get_columns()[:-1])
        extra = [int64_series(_AT, np.arange(live.height, dtype=np.int64))]
        if self._part:
            extra.append(pl.Series(_H, self._part_hash(live)))
        live = live.hstack(extra).sort(self._by, descending=self._desc, nulls_last=self._nulls_last)
        part_h = live[_H].to_numpy() if self._part else np.zeros(live.height, dtype=np.uint64)
        frame = pick(live, self._cols)
        row_hashes = row_hashes[live.get_column(_AT).to_numpy()]
        order = argsort_hashes(row_hashes)
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

    def _prefix(
        self, run: _Run, hashes: np.ndarray, changed: tuple[np.ndarray, np.ndarray], want: int | None = None
    ) -> np.ndarray:
        """Positions of the first rows of each key's range holding `limit` rows live before
        and after the change (the whole range where partitions share a hash). `changed`: the run's
        positions that the change's rows hold, ascending, and the change's weights there."""
        at, dw = changed
        lo = np.searchsorted(run.part_h, hashes, side="left")
        hi = np.searchsorted(run.part_h, hashes, side="right")
        size = hi - lo
        want = self._limit if want is None else want
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
        z = delta if delta.types == self._types else ZSet.from_frame(delta.frame, self._types)
        if z.frame.height == 0:
            return ZSet.empty(self._out_types), lambda: None
        if self._part:
            return self._step_runs(z.consolidate())
        # (the head's step consolidates the few rows that reach it; a fold, the rest)
        d = z.frame
        if self._head is None:
            self._read_head()
        got = self._step_head(d)
        if got is None:  # the change deletes the head below `limit`: read a deeper one
            self._read_head()
            got = self._step_head(d)
        if got is None:  # it deletes more than the head holds
            out, commit = self._step_runs(z.consolidate())

            def commit_runs() -> None:
                commit()
                self._head = None

            return out, commit_runs
        out, head = got

        def commit_head() -> None:
            self._head = head
            self._pending.append(d)
            self._pending_rows += d.height
            self._checkpoint = None
            if self._pending_rows > max(_FOLD_MIN, self.state_rows() // 8):
                self._fold()

        return out, commit_head

    def _step_head(self, d: pl.DataFrame) -> tuple[ZSet, _Head] | None:
        """The step and the next head from the head alone; None where the change leaves
        fewer than `limit` of its copies live and rows after it may move up."""
        head = self._head
        assert head is not None
        if head.bounded:
            d = self._may_precede(d, head.frame)
            if d.height == 0:  # the usual case: the change is all after the head
                return ZSet.empty(self._out_types), head
        rows = ZSet(concat_frames([_weighted(head.frame, head.weights), d]), self._types).consolidate().frame
        if head.bounded:
            # keep the rows up to the head's last, which sorts after an equal row of `rows`
            last = head.frame.tail(1).hstack([int64_series(WEIGHT, np.zeros(1, dtype=np.int64))])
            marks = (np.zeros(rows.height, dtype=np.int8), np.ones(1, dtype=np.int8))
            marked = concat_frames(
                [rows.hstack([pl.Series(_MARK, marks[0])]), last.hstack([pl.Series(_MARK, marks[1])])]
            )
            marked = marked.sort(
                [*self._by, _MARK], descending=[*self._desc, False], nulls_last=[*self._nulls_last, False]
            )
            cut = int(np.argmax(marked.get_column(_MARK).to_numpy()))
            rows = pick(marked, [*self._cols, WEIGHT]).head(cut)
        else:
            rows = rows.sort(self._by, descending=self._desc, nulls_last=self._nulls_last) if self._by else rows
        weights = rows.get_column(WEIGHT).to_numpy()
        if weights.size and int(weights.min()) < 0:
            # every row the head lacks sorts after it: one it lacks cannot be deleted here
            raise InternalCompilerError("top-k state would hold a row a negative number of times")
        live = np.flatnonzero(weights)
        weights = weights[live]
        if head.bounded and int(weights.sum()) < self._limit:
            return None
        frame = take_rows(pick(rows, self._cols), live)
        return self._with_top(frame, weights, head.bounded, head.top)

    def _may_precede(self, d: pl.DataFrame, head: pl.DataFrame) -> pl.DataFrame:
        """The rows of `d` that may sort before the head's last row or equal it, by their
        first sort key alone (a superset: the sort with the head decides). In numpy for
        numbers without NULLs (and decimals of 18 digits), else a polars filter."""
        key = self._by[0]
        column, last = d.get_column(key), head.get_column(key).tail(1)
        dtype = column.dtype
        if not (dtype.is_numeric() or dtype.is_temporal() or dtype in (pl.String, pl.Boolean)):
            return d
        value = last[0]
        if value is None or (dtype.is_float() and value != value):  # NULL or NaN: keep all
            return d
        pair = _int64_pair(column, last) if not column.null_count() else None
        if pair is not None:
            values, bound = pair
            keep = values >= bound if self._desc[0] else values <= bound
            if dtype.is_float():
                keep |= np.isnan(values)
            return take_rows(d, np.flatnonzero(keep))
        c = pl.col(key)
        test = c >= value if self._desc[0] else c <= value
        if dtype.is_float():
            test |= c.is_nan()
        if not self._nulls_last[0]:
            test |= c.is_null()
        return d.filter(test.fill_null(False))

    def _with_top(
        self, frame: pl.DataFrame, weights: np.ndarray, bounded: bool, old: ZSet | None
    ) -> tuple[ZSet, _Head]:
        """A head from sorted live rows, cut back to H copies once it holds 2H; and the
        change from `old`'s top to its own."""
        depth = self._depth
        ends = np.cumsum(weights)
        if ends.size and int(ends[-1]) > 2 * depth:
            n = int(np.searchsorted(ends, depth)) + 1  # through the row holding copy H
            frame, weights, ends, bounded = frame.head(n), weights[:n], ends[:n], True
        copies = min(self._limit, int(ends[-1]) if ends.size else 0)
        at = np.searchsorted(ends, np.arange(1, copies + 1), side="left")  # each copy's row
        numbers = pl.Series("", np.arange(1, copies + 1), dtype=polars_dtype(SqlType("INT")))
        top_frame = take_rows(frame, at).hstack(
            [numbers.alias(col_name(len(self._cols))), int64_series(WEIGHT, np.ones(copies, dtype=np.int64))]
        )
        top = ZSet(top_frame, self._out_types, True)  # (row, number) pairs are distinct
        out = top if old is None else ZSet.concat([top, old.negate()], self._out_types).consolidate()
        return out, _Head(frame, weights, bounded, top)

    def _read_head(self) -> None:
        """The head, read from the runs after folding the pending changes into them."""
        self._fold()
        depth = self._depth
        none = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        parts, total = [], 0
        for run in self._runs:
            pos = self._prefix(run, np.zeros(1, dtype=np.uint64), none, depth)
            live = pos[run.weights[pos] > 0]
            parts.append(_weighted(take_rows(run.frame, live), run.weights[live]))
            total += int(run.weights.sum())
        rows = concat_frames(parts) if parts else ZSet.empty(self._types).frame
        rows = rows.sort(self._by, descending=self._desc, nulls_last=self._nulls_last) if self._by else rows
        weights = rows.get_column(WEIGHT).to_numpy()
        ends = np.cumsum(weights)
        n = int(np.searchsorted(ends, depth)) + 1 if ends.size and int(ends[-1]) > depth else weights.size
        kept = pick(rows, self._cols).head(n)
        self._head = self._with_top(kept, weights[:n], int(ends[n - 1]) < total if n else False, None)[1]

    def _fold(self) -> None:
        """Apply the pending changes to the runs (the integral is unchanged)."""
        if not self._pending:
            return
        z = ZSet(concat_frames(self._pending), self._types).consolidate()
        self._pending, self._pending_rows = [], 0
        if z.frame.height:
            row_h = _row_hashes(z)
            found = self._found(z.frame, row_h)
            self._apply(z.frame, row_h, found, self._fresh(z.frame, found))

    def _found(self, d: pl.DataFrame, row_h: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each run, the change's rows it holds (a run holds distinct rows: once each),
        given their row hashes."""
        by_hash = argsort_hashes(row_h)
        return [self._find(run, d, by_hash, row_h[by_hash]) for run in self._runs]

    def _step_runs(self, z: ZSet) -> tuple[ZSet, Any]:
        """The step from the runs: the first rows of each changed partition of each run
        (`z` consolidated)."""
        d, row_h = z.frame, _row_hashes(z)
        if d.height == 0:
            return ZSet.empty(self._out_types), lambda: None
        keys = d.select(self._part).unique()  # no columns for a global top-k: one partition
        hashes = np.zeros(1, dtype=np.uint64)
        if self._part:
            hashes = self._part_hash(keys)
            order = np.argsort(hashes, kind="stable")
            keys, hashes = keys[order], hashes[order]

        d_w = d[WEIGHT].to_numpy()
        found = self._found(d, row_h)
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
        new = window(after, self._partition, self._order, rn, self._out_types, self._limit)
        old = window(before, self._partition, self._order, rn, self._out_types, self._limit)
        out = ZSet.concat([new, old.negate()], self._out_types).consolidate()
        fresh = self._fresh(d, found)  # checked before the commit

        def commit() -> None:
            self._apply(d, row_h, found, fresh)
            self._checkpoint = None

        return out, commit

    def _fresh(self, d: pl.DataFrame, found: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """The change's rows no run holds (their indexes): a new run's, so all positive."""
        rest = np.ones(d.height, dtype=bool)
        for d_idx, _ in found:
            rest[d_idx] = False
        fresh = np.flatnonzero(rest)
        if fresh.size and int(d.get_column(WEIGHT).to_numpy()[fresh].min()) <= 0:
            raise InternalCompilerError("top-k state would hold a row a negative number of times")
        return fresh

    def _apply(
        self, d: pl.DataFrame, row_h: np.ndarray, found: list[tuple[np.ndarray, np.ndarray]], fresh: np.ndarray
    ) -> None:
        """Add the change (with its row hashes) to the runs: weights where they hold its
        rows (`found`), a new run of the others (`fresh`), then the merges."""
        d_w = d[WEIGHT].to_numpy()
        for run, (d_idx, pos) in zip(self._runs, found, strict=True):
            old_w = run.weights[pos]
            new_w = old_w + d_w[d_idx]
            if new_w.size and int(new_w.min()) < 0:
                raise InternalCompilerError("top-k state holds a row a negative number of times")
            run.weights[pos] = new_w
            run.dead += int((new_w == 0).sum()) - int((old_w == 0).sum())
        self._runs = [self._without_tombstones(r) if 2 * r.dead > r.frame.height else r for r in self._runs]
        self._runs = [r for r in self._runs if r.frame.height]
        if fresh.size:
            self._runs.append(self._run(take_rows(d, fresh), row_h[fresh]))
        runs = self._runs
        while len(runs) >= 2 and runs[-2].frame.height <= _MERGE_FACTOR * runs[-1].frame.height:
            (new, new_h), (old, old_h) = runs.pop().live(), runs.pop().live()
            runs.append(self._run(concat_frames([old, new]), np.concatenate([old_h, new_h])))

    def _live(self) -> pl.DataFrame:
        """The integral: c0.., w (distinct rows, positive weights)."""
        self._fold()
        frames = [r.live()[0] for r in self._runs]
        return concat_frames(frames) if frames else ZSet.empty(self._types).frame

    # -- checkpoints: the integral, as one trace built when a checkpoint asks ------------

    def traces(self) -> dict[str, Trace]:
        if self._checkpoint is None:
            self._checkpoint = Trace(self._types, ())
            self._checkpoint.insert(ZSet(self._live(), self._types))
        return {"": self._checkpoint}

    def state_rows(self) -> int:
        held = [r.frame for r in self._runs] + self._pending + ([self._head.frame] if self._head else [])
        return sum(f.height for f in held)

    def state_bytes(self) -> int:
        held = [r.frame for r in self._runs] + self._pending + ([self._head.frame] if self._head else [])
        return sum(int(f.estimated_size()) for f in held)

    def meta(self) -> None:
        return None

    def restored(self, meta: object) -> None:
        if self._checkpoint is not None:
            live = self._checkpoint.snapshot().frame
            self._runs = [self._run(live)] if live.height else []
        self._pending, self._pending_rows, self._head = [], 0, None


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

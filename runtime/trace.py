"""Indexed integrated Z-sets: the state behind I and z^-1∘I (DBSP §2, §4.5).

A `Trace` holds the running sum of every batch inserted so far, Σ_{s≤t} Δ[s] (Def. I in
DBSP §2: I(s)[t] = Σ_{i≤t} s[i]). Bilinear and non-linear operators only ever ask
"which stored rows have one of these keys?", so the state is indexed by key: §1.5's
O(C) / O(C²) bounds for incremental operators assume exactly this kind of indexed
lookup (a nested loop over the whole state would cost as much as recomputation).

Layout (a "spine", as in differential dataflow's arrangements): a list of runs, oldest
and largest first. Each run is consolidated (each full row once, no zero weight) and
sorted by a 64-bit hash of its key columns, then by a 64-bit hash of the whole row; both
are kept beside it as uint64 arrays. A lookup searches every run for the probe hashes,
gathers the candidate rows, then drops hash collisions with an exact (null-safe)
semi-join. Runs merge geometrically, so there are O(log |state|) of them and every row
is re-merged O(log |state|) times. Equal rows have equal hashes, so a merge is one pass
over the two hash orders that adds the weights of the rows found in both. Sorting,
merging and probing are compiled kernels (runtime/native/spine.pyx) over the hash
arrays; the rows are Arrow columns, gathered once per operation.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import polars as pl

from dbspc.compiler.types import SqlType
from dbspc.runtime.native import spine
from dbspc.runtime.zset import (
    WEIGHT,
    ZSet,
    argsort_hashes,
    col_name,
    concat_frames,
    decimal_words,
    frame_of_bytes,
    frame_of_numbers,
    groups_hold_equal_rows,
    hash_groups,
    hash_rows,
    is_plain_number,
    pick,
    polars_dtype,
    rows_equal,
    schema_of,
    stack,
    take_pair_beside,
    take_series,
    take_weighted,
    with_weights,
)
from dbspc.runtime.zset import take as take_frame  # `take` names merge plans here

# Merge the newest run into the previous one while the previous is at most this many
# times larger: run sizes then grow geometrically towards the oldest run.
_MERGE_FACTOR = 4


def _consolidate_frame(frame: pl.DataFrame, types: tuple[SqlType, ...]) -> pl.DataFrame:
    """Sum the weights of equal rows and drop zeros (Z-set normal form)."""
    return ZSet(frame, types).consolidate().frame


def _gather_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenation of the index ranges [lo[i], hi[i]) without a Python loop."""
    counts = hi - lo
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    starts = np.repeat(lo, counts)
    # Position of each output slot inside its own range: arange minus the range's offset.
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    out: np.ndarray = starts + (np.arange(total, dtype=np.int64) - offsets)
    return out


def _plain_numbers(frame: pl.DataFrame) -> list[np.ndarray] | None:
    """The frame's columns as numpy arrays when each is a plain number column; else None."""
    columns = frame.get_columns()
    return [c.to_numpy() for c in columns] if all(is_plain_number(c) for c in columns) else None


def _number_view(column: pl.Series) -> np.ndarray | None:
    """numpy's view of one chunk of plain numbers (no copy), else None."""
    return column.to_numpy() if column.n_chunks() == 1 and is_plain_number(column) else None


def _comparable(column: pl.Series) -> np.ndarray | None:
    """One chunk of plain numbers, or of DECIMAL without NULLs, as numpy arrays that
    compare row by row as `rows_equal` compares the values (a DECIMAL as its (n, 2)
    decimal128 words): numpy's views, no copy. None for any other column."""
    numbers = _number_view(column)
    if numbers is not None:
        return numbers
    if column.n_chunks() == 1 and column.dtype.is_decimal() and not column.null_count():
        words = decimal_words(column)
        return None if words is None else words[0]
    return None


def _as_bytes(values: np.ndarray | None) -> np.ndarray | None:
    """A `_comparable` view as C-contiguous (rows, width) bytes, or None."""
    if values is None or not values.flags.c_contiguous or not len(values):
        return None
    return values.view(np.uint8).reshape(len(values), -1)


def _values_at(column: pl.Series, rows: np.ndarray) -> np.ndarray:
    """A column's values at `rows` as numpy: through numpy's view of one chunk (no copy of
    the column), else gathered first (a run read back from a checkpoint may be chunked)."""
    return column.to_numpy()[rows] if column.n_chunks() == 1 else take_series(column, rows).to_numpy()


def _sorted_unique(values: np.ndarray, presorted: bool = False) -> np.ndarray:
    """Distinct values, ascending (np.unique's hash-based path is far slower here)."""
    v = values if presorted else np.sort(values)
    if v.size == 0:
        return v
    keep = np.empty(v.size, dtype=bool)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


# A merge of at least this many rows runs on the merger thread, beside the steps, so
# that no step pays an O(|state|) merge (polars and numpy release the GIL). The step
# that finds it finished puts the merged run in place.
_BACKGROUND_ROWS = 1 << 16
_MERGER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbspc-merge")
# While a merge is under way the tail keeps its runs; past this many, a step waits.
_MAX_RUNS = 48
# A saved run's hash columns (Trace.saved_run), and how many of its rows a reload hashes
# again to check that the saved hashes are this trace's.
_SAVED_KEY_HASH = "__key_hash"
_SAVED_ROW_HASH = "__row_hash"
_HASH_SAMPLE = 64
# Up to this many rows a probe's matches are gathered in numpy from the runs' views; more
# go through polars' multithreaded gather (zset.take draws the same line).
_NUMPY_GATHER_ROWS = 1 << 16


# A step's small merges (each under _BACKGROUND_ROWS) are owed, not made in the step:
# inside `merges_owed`, a trace's first insert only appends its run; when the block ends
# (the step's outputs are out) the merges it needs go to the idle merger's thread, to be
# made before the next step, which waits for them first (`settle_owed`). Steps that come
# back to back pay the same merges, at the next step's start.
_IDLE_MERGER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbspc-merge-idle")
# Smaller merges are made in the step: handing one to the thread and back costs more
# (the slt's steps merge runs of a few rows: select3 took 20% more CPU owing them).
_OWED_ROWS = 1 << 10
_LATER = threading.local()  # .owing: traces owing merges in the open block; .flying: submitted


@dataclass(frozen=True, slots=True)
class _Merging:
    old: _Run
    new: _Run
    result: Future[_Run | None]


@dataclass(frozen=True, slots=True)
class _Owed:
    """Small merges under way on the idle merger: `runs` (the trace's runs when they were
    submitted, oldest first) in geometric order again once `result` is done."""

    runs: tuple[_Run, ...]
    result: Future[list[_Run]]


@contextmanager
def merges_owed() -> Iterator[None]:
    """A step: the small merges its inserts call for are made after the block, on the
    idle merger (an inner block leaves them to the outermost one)."""
    if getattr(_LATER, "owing", None) is not None:
        yield
        return
    owing: list[Trace] = []
    _LATER.owing = owing
    try:
        yield
    finally:
        _LATER.owing = None
        flying = getattr(_LATER, "flying", None)
        if flying is None:
            flying = _LATER.flying = []
        for trace in owing:
            if trace._owe():
                flying.append(trace)


def settle_owed() -> None:
    """Put in place the merges this thread's earlier steps left to the idle merger,
    waiting for those still under way: a step starts from the layout it would have had
    if it had merged them itself."""
    flying = getattr(_LATER, "flying", None)
    while flying:
        flying.pop()._adopt_owed()


@dataclass(frozen=True, slots=True)
class _Run:
    """A consolidated batch sorted by key hash, with each row's key and full-row hash."""

    hashes: np.ndarray  # uint64 key hashes, ascending
    row_hashes: np.ndarray  # uint64 hashes of the full rows (to find rows that may cancel)
    frame: pl.DataFrame  # c0.., w in the same order
    fences: np.ndarray  # every spine.FENCE_STEP-th key hash: what a probe searches first
    # numpy's views of the columns read by number, and (under "=name") `comparable`'s
    # and (under "#name") `row_bytes`' (runs never change, so each is made once)
    views: dict[str, np.ndarray | None] = field(default_factory=dict, compare=False)
    # `plain_bytes`' columns, made once (absent: not yet made)
    plain: dict[str, list[np.ndarray] | None] = field(default_factory=dict, compare=False)

    def __len__(self) -> int:
        return self.frame.height

    def numbers(self, name: str) -> np.ndarray | None:
        """Column `name` as numpy's view of it (no copy) when it is one chunk of plain
        numbers without NULLs, else None: a probe's gathers then cost one indexing each
        instead of a handful of polars calls."""
        try:
            return self.views[name]
        except KeyError:
            pass
        values = self.views[name] = _number_view(self.frame.get_column(name))
        return values

    def comparable(self, name: str) -> np.ndarray | None:
        """Column `name` as `_comparable` sees it, made once (an inline lookup, as in
        `numbers`: both sit on a probe's hot path)."""
        key = f"={name}"
        try:
            return self.views[key]
        except KeyError:
            pass
        values = self.views[key] = _comparable(self.frame.get_column(name))
        return values

    def plain_bytes(self, names: Sequence[str]) -> list[np.ndarray] | None:
        """Columns `names` as (rows, width) bytes of `numbers`' views, when every one is
        plain numbers; else None. Made once, for the one caller's `names` (a trace's
        columns, what `spine.gather_matches` gathers)."""
        try:
            return self.plain["*"]
        except KeyError:
            pass
        views = []
        for name in names:
            view = _as_bytes(self.numbers(name))
            if view is None:
                self.plain["*"] = None
                return None
            views.append(view)
        self.plain["*"] = views
        return views

    def row_bytes(self, names: Sequence[str]) -> list[np.ndarray] | None:
        """Columns `names` as `_as_bytes` sees them (each made once, under "#name"), or
        None if one has no such view: what `spine.held_weights` compares."""
        views = []
        for name in names:
            key = f"#{name}"
            if key not in self.views:
                self.views[key] = _as_bytes(self.comparable(name))
            view = self.views[key]
            if view is None:
                return None
            views.append(view)
        return views

    def hold_decimal_slots(self, name: str, slots: np.ndarray) -> None:
        """Column `name` (a DECIMAL without NULLs) is held in `slots`, (rows, 16) bytes of
        its decimal128 values that its Arrow buffer is (`frame_of_bytes`): its
        `comparable` and `row_bytes` views, made without asking polars."""
        self.views[f"={name}"], self.views[f"#{name}"] = slots.view(np.int64).reshape(-1, 2), slots


def _next_merge(runs: Sequence[_Run], busy: tuple[_Run, ...], large: bool = False) -> int | None:
    """The newest adjacent pair of `runs` out of geometric order (the older at most
    _MERGE_FACTOR times the newer) that can merge now: taking no run in `busy` (the
    two a large merge under way takes), and a large one (_BACKGROUND_ROWS or more)
    only if `large`."""
    for i in range(len(runs) - 2, -1, -1):
        older, newer = runs[i], runs[i + 1]
        if len(older) > _MERGE_FACTOR * len(newer):
            continue
        if any(r is older or r is newer for r in busy):
            continue
        if not large and len(older) + len(newer) >= _BACKGROUND_ROWS:
            continue
        return i
    return None


class Trace:
    """An integrated Z-set over `types`, indexed by the key columns `key`.

    `key=()` is the single-key index: every probe matches every stored row (cross joins,
    global aggregates). NULL keys compare equal to NULL keys here; callers that need
    SQL equality (joins) drop NULL keys before probing.
    """

    def __init__(self, types: Sequence[SqlType], key: tuple[int, ...], derived: bool = False) -> None:
        # derived: its owner rebuilds it from its other traces when a checkpoint lacks it
        self.derived = derived
        self._types: tuple[SqlType, ...] = tuple(types)
        self._key: tuple[int, ...] = tuple(key)
        for k in self._key:
            if not 0 <= k < len(self._types):
                raise ValueError(f"key column {k} out of range for {len(self._types)} columns")
        self._schema = schema_of(self._types)
        self._columns = [col_name(i) for i in range(len(self._types))]
        self._key_names = [col_name(k) for k in self._key]
        self._key_dtypes = [polars_dtype(self._types[k]) for k in self._key]
        self._dtypes = list(self._schema.values())
        self._frame_columns = [*self._columns, WEIGHT]
        self._runs: list[_Run] = []
        self._merging: _Merging | None = None
        self._owed: _Owed | None = None
        self._owing = False  # its merges are owed by the open `merges_owed` block
        # keyed by the whole row, in column order (a table's trace): the key hash is the row hash
        self._whole_row = self._key == tuple(range(len(self._types)))
        self._hash_is_row = self._whole_row or not self._key  # one hash array serves both

    def _ordered(self, frame: pl.DataFrame) -> pl.DataFrame:
        """`frame` with exactly the columns c0.., w, in that order."""
        names = [*self._columns, WEIGHT]
        return frame if frame.columns == names else pick(frame, names)

    @property
    def types(self) -> tuple[SqlType, ...]:
        return self._types

    @property
    def key(self) -> tuple[int, ...]:
        return self._key

    def __len__(self) -> int:
        """Rows stored (across runs; rows that cancel between runs count until merged)."""
        self._adopt_owed()  # (as many as if the step had merged: reports do not move with timing)
        return sum(len(run) for run in self._runs)

    def nbytes(self) -> int:
        """Bytes held: each run's columns (their Arrow size), its hash arrays (one when
        the key hash is the row hash) and its fences."""
        self._adopt_owed()
        total = 0
        for run in self._runs:
            shared = run.row_hashes is run.hashes
            total += int(run.frame.estimated_size()) + run.hashes.nbytes + (0 if shared else run.row_hashes.nbytes)
            total += run.fences.nbytes
        return total

    def runs(self) -> list[pl.DataFrame]:
        """The consolidated runs, oldest first (for checkpoints that save runs once)."""
        self._adopt_owed()  # (so that a checkpoint saves the same layout, however timed)
        return [run.frame for run in self._runs]

    @property
    def run_count(self) -> int:
        return len(self._runs)

    # -- hashing -------------------------------------------------------------------

    def _hash(self, frame: pl.DataFrame, names: list[str]) -> np.ndarray:
        if not names:
            # A zero-column select would have height 0, so size from the frame itself.
            return np.zeros(frame.height, dtype=np.uint64)
        return hash_rows([frame.get_column(n) for n in names])

    def _key_hashes(self, frame: pl.DataFrame) -> np.ndarray:
        """uint64 hashes of the key columns (named and typed as the trace's) of `frame`:
        the sort order of a run. With key=() lookups return everything, so any
        consistent order works: use the full-row hash, which makes merges cheap."""
        return self._hash(frame, self._key_names if self._key else self._columns)

    def _row_hashes(self, frame: pl.DataFrame, key_hashes: np.ndarray) -> np.ndarray:
        return key_hashes if not self._key or self._whole_row else self._hash(frame, self._columns)

    def _hashes(
        self, frame: pl.DataFrame, known: np.ndarray | None = None, known_keys: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The key and row hashes of `frame`. `known`, when given, is `hash_rows` of its
        columns c0.. (a consolidated ZSet's `hashes`, the frame in the trace's columns and
        dtypes): the row hash, and the key hash too where the row is the key.
        `known_keys`, when given, is the key hash (`ZSet.key_hashes` of the key)."""
        if known_keys is None or not self._key:
            known_keys = known if known is not None and self._hash_is_row else self._key_hashes(frame)
        return known_keys, (self._row_hashes(frame, known_keys) if known is None else known)

    def _known_hashes(self, frame: pl.DataFrame, z: ZSet) -> tuple[np.ndarray | None, np.ndarray | None]:
        """`z.hashes` and `z.key_hashes` of the key, where they are the hashes of `frame`'s
        rows as this trace hashes them: `frame` is z's own frame, in the trace's columns
        and dtypes."""
        if frame is not z.frame or frame.columns != self._frame_columns:
            return None, None
        return z.hashes, (z.key_hashes(self._key) if self._key else None)

    def _make_run(
        self, frame: pl.DataFrame, known: np.ndarray | None = None, known_keys: np.ndarray | None = None
    ) -> _Run | None:
        """Consolidate `frame` into a run sorted by (key hash, row hash); None if nothing
        is left. Equal rows have equal hashes, so they are neighbours in that order: one
        compiled sort finds them, and the rows are gathered once. `known`, `known_keys`: as
        `_hashes`."""
        if frame.height == 0:
            return None
        key_hashes, row_hashes = self._hashes(frame, known, known_keys)
        order, starts = hash_groups(key_hashes, row_hashes)
        weights = frame.get_column(WEIGHT).to_numpy()
        if len(starts) == len(order):  # no two rows share both hashes
            idx = order[weights[order] != 0]
            return self._run(key_hashes, row_hashes, idx, take_frame(frame, idx)) if idx.size else None
        if not groups_hold_equal_rows(frame.get_columns()[:-1], order, starts):
            return self._run_of_distinct(_consolidate_frame(frame, self._types))  # a hash collision
        sums = np.add.reduceat(weights[order], starts)
        keep = sums != 0
        idx = order[starts][keep]
        if not idx.size:
            return None
        return self._run(key_hashes, row_hashes, idx, take_weighted(frame, idx, sums[keep]))

    def _run(self, key_hashes: np.ndarray, row_hashes: np.ndarray, rows: np.ndarray, frame: pl.DataFrame) -> _Run:
        """A run of `frame` (already gathered) from the hashes of the rows it holds; a trace
        whose key hash is the row hash keeps one array for both."""
        keys = key_hashes[rows]
        return _Run(keys, keys if key_hashes is row_hashes else row_hashes[rows], frame, spine.fences(keys))

    def _run_of_distinct(self, frame: pl.DataFrame) -> _Run | None:
        """A run of a consolidated frame (rows already distinct, weights non-zero)."""
        if frame.height == 0:
            return None
        key_hashes, row_hashes = self._hashes(frame)
        order, _ = hash_groups(key_hashes, row_hashes)
        return self._run(key_hashes, row_hashes, order, take_frame(frame, order))

    # -- updates -------------------------------------------------------------------

    def restore_runs(self, frames: Sequence[pl.DataFrame]) -> bool:
        """Refill an empty trace with runs saved by `runs()` (oldest first), adopting each
        as it is: only its hashes are computed again, no sort or merge (a restart, or a
        bucket read back on another worker). False, with nothing changed, if a frame is
        not in this trace's run order (saved with another hash function, say): the
        caller then inserts the frames."""
        if self._runs:
            raise ValueError("restore_runs fills an empty trace")
        runs = []
        for saved in frames:
            if saved.height == 0:
                continue
            frame = self._ordered(saved)  # (without the saved hash columns)
            if frame.dtypes != self._dtypes:
                frame = frame.select([pl.col(name).cast(dtype) for name, dtype in self._schema.items()])
            keys, rows = self._saved_hashes(saved, frame) or self._hashes(frame)
            later, earlier = keys[1:], keys[:-1]
            ordered = (later > earlier) | ((later == earlier) & (rows[1:] >= rows[:-1]))
            if not ordered.all() or not frame.get_column(WEIGHT).to_numpy().all():
                return False
            runs.append(_Run(keys, rows, frame, spine.fences(keys)))
        self._runs = runs
        return True

    def saved_run(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The run whose frame is `frame` (one of `runs()`), as a checkpoint writes it:
        its columns, then its key hashes and (when they differ) its row hashes, so that a
        reload maps them instead of hashing every row again."""
        run = next(r for r in self._runs if r.frame is frame)
        hashes = [pl.Series(_SAVED_KEY_HASH, run.hashes)]
        if run.row_hashes is not run.hashes:
            hashes.append(pl.Series(_SAVED_ROW_HASH, run.row_hashes))
        return frame.hstack(hashes)

    def _saved_hashes(self, saved: pl.DataFrame, frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
        """The hashes a saved run carries (`saved_run`), if they are this trace's: the
        rows at up to _HASH_SAMPLE places are hashed again and must give the same, so a
        file saved by another hash function (or with hashes of other columns) is hashed
        anew rather than trusted. None: hash the rows."""
        names = saved.columns
        if _SAVED_KEY_HASH not in names or (not self._hash_is_row and _SAVED_ROW_HASH not in names):
            return None
        keys = saved.get_column(_SAVED_KEY_HASH).to_numpy()
        rows = keys if self._hash_is_row else saved.get_column(_SAVED_ROW_HASH).to_numpy()
        at = np.unique(np.linspace(0, frame.height - 1, min(frame.height, _HASH_SAMPLE)).astype(np.int64))
        sample = take_frame(frame, at)
        sample_keys = self._key_hashes(sample)
        if not np.array_equal(sample_keys, keys[at]):
            return None
        if not self._hash_is_row and not np.array_equal(self._row_hashes(sample, sample_keys), rows[at]):
            return None
        return keys, rows

    def insert(self, delta: ZSet) -> None:
        """state := state + delta (the integrator's step, DBSP §2: I = Σ)."""
        if delta.frame.height == 0:
            return
        frame = delta.frame
        if frame.dtypes != self._dtypes:
            frame = frame.select([pl.col(name).cast(dtype) for name, dtype in self._schema.items()])
        run = self._make_run(self._ordered(frame), *self._known_hashes(frame, delta))
        if run is None:
            return
        self._adopt_owed()
        self._adopt()
        self._runs.append(run)
        owing = getattr(_LATER, "owing", None)
        if owing is not None and not self._owing and self._owes_enough():
            self._owing = True  # merged after the step (a second insert merges now)
            owing.append(self)
            return
        self._rebalance()

    def _busy(self) -> tuple[_Run, ...]:
        """The runs a large merge under way takes (none, or the two it merges)."""
        m = self._merging
        return () if m is None else (m.old, m.new)

    def _owes_enough(self) -> bool:
        """Whether the next small merge is worth leaving to the idle merger."""
        i = _next_merge(self._runs, self._busy())
        return i is not None and len(self._runs[i]) + len(self._runs[i + 1]) >= _OWED_ROWS

    def _owe(self) -> bool:
        """At the end of a `merges_owed` block: submit the small merges the runs need to
        the idle merger; whether there were any."""
        self._owing = False
        busy = self._busy()
        if _next_merge(self._runs, busy) is None:
            self._rebalance()  # (a large merge alone, to the merger)
            return False
        runs = tuple(self._runs)
        self._owed = _Owed(runs, _IDLE_MERGER.submit(self._merged_small, runs, busy))
        return True

    def _merged_small(self, runs: tuple[_Run, ...], busy: tuple[_Run, ...]) -> list[_Run]:
        """`runs` after every small merge `_rebalance` would make (on the idle merger:
        it reads the runs, which never change, and changes nothing)."""
        out = list(runs)
        while (i := _next_merge(out, busy)) is not None:
            merged = self._merge(out[i], out[i + 1])
            out[i : i + 2] = [] if merged is None else [merged]
        return out

    def _adopt_owed(self) -> None:
        """Wait for the owed merges and put them in place: the runs they were made from
        are still the oldest, for only this thread changes the list, and only here,
        in `insert` (appending) and in `_adopt` (after this). Then the large merges."""
        owed = self._owed
        if owed is None:
            return
        self._owed = None
        merged = owed.result.result()
        n = len(owed.runs)
        assert all(a is b for a, b in zip(self._runs[:n], owed.runs, strict=True))
        self._runs[:n] = merged
        self._rebalance()

    def _rebalance(self) -> None:
        """Merge runs until they are in geometric order again (or wait for the merger)."""
        while (i := _next_merge(self._runs, self._busy(), large=self._merging is None)) is not None:
            older, newer = self._runs[i], self._runs[i + 1]
            if len(older) + len(newer) >= _BACKGROUND_ROWS:
                self._merging = _Merging(older, newer, _MERGER.submit(self._merge, older, newer, True))
                continue
            merged = self._merge(older, newer)
            self._runs[i : i + 2] = [] if merged is None else [merged]
        if len(self._runs) > _MAX_RUNS and self._merging is not None:
            self._adopt(wait=True)  # the merger fell far behind: catch up now
            self._rebalance()

    def _adopt(self, wait: bool = False) -> None:
        """Put a finished background merge in place of the two runs it merged (still
        adjacent: runs never change once made, and no other merge takes either)."""
        m = self._merging
        if m is None or not (wait or m.result.done()):
            return
        self._merging = None
        i = next(i for i, r in enumerate(self._runs) if r is m.old)
        assert self._runs[i + 1] is m.new
        merged = m.result.result()
        self._runs[i : i + 2] = [] if merged is None else [merged]

    def settle(self) -> None:
        """Finish every merge, the large ones too (tests and benchmarks that look at the
        layout)."""
        self._adopt_owed()
        self._adopt(wait=True)
        self._rebalance()
        while self._merging is not None:
            self._adopt(wait=True)
            self._rebalance()

    def _merge(self, old: _Run, new: _Run, beside: bool = False) -> _Run | None:
        """old + new as one consolidated run.

        Both runs are sorted by (key hash, row hash) and hold each row once, so a row in
        both is a pair of equal hashes: the compiled merge interleaves the runs in one
        pass and lists those pairs. Their rows are checked equal and their weights
        added; then the rows are gathered once, in the merged order (`beside`: on the
        merger thread, gathered outside polars' thread pool, which the steps share).
        Runs of fixed-width columns without NULLs do all of it in one compiled call
        (`_merged_in_one_pass`), which uses no polars thread either.
        """
        merged = self._merged_in_one_pass(old, new)
        if merged is not False:
            return merged
        take, in_old, in_new, slot, simple = spine.merge_plan(old.hashes, old.row_hashes, new.hashes, new.row_hashes)
        if not simple or (
            in_old.size and not rows_equal(old.frame.get_columns()[:-1], in_old, new.frame.get_columns()[:-1], in_new)
        ):  # two different rows with equal hashes: consolidate exactly
            return self._make_run(stack([old.frame, new.frame]))

        def gather(rows: np.ndarray) -> pl.DataFrame:
            if beside:
                return take_pair_beside(old.frame, new.frame, rows)
            return self._gather_pair(old, new, rows)

        key_hashes = np.concatenate([old.hashes, new.hashes])
        row_hashes = key_hashes if self._hash_is_row else np.concatenate([old.row_hashes, new.row_hashes])
        if not in_old.size:
            return self._run(key_hashes, row_hashes, take, gather(take))
        old_w = old.frame.get_column(WEIGHT).to_numpy()
        weights = np.concatenate([old_w, new.frame.get_column(WEIGHT).to_numpy()])[take]
        weights[slot] = old_w[in_old] + new.frame.get_column(WEIGHT).to_numpy()[in_new]
        keep = weights != 0
        take = take[keep]
        if not take.size:
            return None
        return self._run(key_hashes, row_hashes, take, with_weights(gather(take), weights[keep]))

    def _merged_in_one_pass(self, old: _Run, new: _Run) -> _Run | Literal[False] | None:
        """`_merge` in one compiled pass (`spine.merge_rows`), when every column of both
        runs is fixed-width without NULLs (`row_bytes`, made once a run and shared with
        the delete checks' probes): a merge of 5k + 2k rows of a table of BIGINT, INT and
        DECIMAL took ~400 us in a dozen numpy and polars calls, and held the GIL for most
        of them beside the step. False when a column is of another kind or two rows share
        their hashes: the caller then merges in numpy and polars."""
        a, b = old.row_bytes(self._columns), new.row_bytes(self._columns)
        aw, bw = old.numbers(WEIGHT), new.numbers(WEIGHT)
        if a is None or b is None or aw is None or bw is None:
            return False
        merged = spine.merge_rows(
            old.hashes, old.row_hashes, new.hashes, new.row_hashes, a, b, aw, bw, self._hash_is_row
        )
        if merged is None:
            return False
        key_hashes, row_hashes, columns, weights = merged
        if not len(weights):
            return None
        dtypes = self._dtypes[: len(columns)]
        frame = frame_of_bytes(self._columns, dtypes, columns, weights)
        if frame is None:
            return False
        run = _Run(key_hashes, row_hashes, frame, spine.fences(key_hashes))
        for name, dtype, values in zip(self._columns, dtypes, columns, strict=True):
            if isinstance(dtype, pl.Decimal):
                run.hold_decimal_slots(name, values)
        return run

    def _gather_pair(self, old: _Run, new: _Run, rows: np.ndarray) -> pl.DataFrame:
        """The rows `rows` of old's frame stacked on new's. Runs of plain numbers are
        gathered from their numpy views, one indexing a column, not through polars'
        gather of stacked (two-chunk) columns (7k + 1k rows of four BIGINTs: 43 us
        against 62)."""
        names = list(self._schema)
        pairs = [(a, b) for n in names if (a := old.numbers(n)) is not None and (b := new.numbers(n)) is not None]
        if len(pairs) == len(names):
            frame = frame_of_numbers(names, [np.concatenate(pair)[rows] for pair in pairs])
            if frame is not None:
                return frame
        return take_frame(stack([old.frame, new.frame]), rows)

    # -- queries -------------------------------------------------------------------

    def snapshot(self) -> ZSet:
        """The whole integrated Z-set, consolidated."""
        frames = [run.frame for run in self._runs]
        if not frames:
            return ZSet.empty(self._types)
        if len(frames) == 1:
            return ZSet(frames[0], self._types)
        return ZSet(_consolidate_frame(stack(frames), self._types), self._types)

    def _typed_as_key(self, probe: pl.DataFrame, probe_cols: Sequence[str]) -> bool:
        """Whether the probe's key columns already have the key's types."""
        schema = probe.schema
        return all(schema[src] == dtype for src, dtype in zip(probe_cols, self._key_dtypes, strict=True))

    def _probe_keys(self, probe: pl.DataFrame, probe_cols: Sequence[str]) -> pl.DataFrame:
        """The probe's keys (repeats and all), renamed to the key's column names and cast
        to its dtypes.

        A value that does not fit the key dtype can match nothing; a non-strict cast
        would turn it into NULL (which would then match NULL keys), so drop it instead.
        """
        if len(probe_cols) != len(self._key):
            raise ValueError(f"probe has {len(probe_cols)} key columns, trace key has {len(self._key)}")
        if self._typed_as_key(probe, probe_cols):  # the common case
            return pick(probe, probe_cols, self._key_names)
        cast = [
            pl.col(src).cast(dtype, strict=False).alias(dst)
            for src, dst, dtype in zip(probe_cols, self._key_names, self._key_dtypes, strict=True)
        ]
        lost = [pl.col(dst).is_null() & pl.col(f"__src{i}").is_not_null() for i, dst in enumerate(self._key_names)]
        keys = probe.select(*cast, *[pl.col(src).alias(f"__src{i}") for i, src in enumerate(probe_cols)])
        keys = keys.filter(~pl.any_horizontal(lost)) if lost else keys
        return pick(keys, self._key_names)

    def _probe(self, key_hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[_Run, np.ndarray]]]:
        """Probe every run for `key_hashes` in one compiled call: the order that sorts the
        hashes, the sorted hashes, and each run holding any of them with the positions.
        Each probe searches the run's fences (cache-resident) and then one block of the
        run: ~2 cache misses a key where a search of a 1M-row run's hashes takes ~10."""
        by_hash = argsort_hashes(key_hashes)
        sorted_hashes = key_hashes[by_hash]
        wanted = _sorted_unique(sorted_hashes, presorted=True)
        found = spine.probe_fenced([r.hashes for r in self._runs], [r.fences for r in self._runs], wanted)
        return by_hash, sorted_hashes, [(run, idx) for run, idx in zip(self._runs, found, strict=True) if idx.size]

    def weights_of(
        self, rows: pl.DataFrame, known: np.ndarray | None = None, known_keys: np.ndarray | None = None
    ) -> np.ndarray | None:
        """The weight held for each of `rows` (c0.. typed as the trace's columns; w and
        other columns after them are ignored), 0 for a row not there, in one probe of
        every run by (key hash, row hash): O(|rows| log |state|). A trace keyed by fewer
        columns (a join's integral of a table, which a delete check reads) is searched
        among a key's rows, so a key with many rows costs a search, not a scan; in one
        keyed by the whole row both hashes are the row's. None when two of `rows` share
        their hashes or one shares them with a different stored row: the caller then
        asks `lookup`, which is exact whatever the hashes. `known`, `known_keys`: `hash_rows`
        of the rows' columns c0.. and of their key columns, when the caller has them."""
        n = rows.height
        out = np.zeros(n, dtype=np.int64)
        if n == 0 or not self._runs:
            return out
        columns = rows.get_columns()[: len(self._types)]
        key_hashes, row_hashes = self._hashes(rows, known, known_keys)
        order, starts = hash_groups(key_hashes, row_hashes)
        if len(starts) != n:
            return None
        done, held = self._held_weights(columns, key_hashes[order], row_hashes[order], order)
        if done:
            return held
        found_pairs = spine.probe_pairs(
            [r.hashes for r in self._runs],
            [r.row_hashes for r in self._runs],
            [r.fences for r in self._runs],
            key_hashes[order],
            row_hashes[order],
        )
        pairs = zip(self._runs, found_pairs, strict=True)
        found = [(run, order[wanted], idx) for run, (wanted, idx) in pairs if idx.size]
        if not found:
            return out
        if not all(self._found_equal(found, j, column) for j, column in enumerate(columns)):
            return None
        for run, row, idx in found:
            out[row] += run.frame.get_column(WEIGHT).to_numpy()[idx]  # a row is once in a run
        return out

    def _held_weights(
        self, columns: list[pl.Series], kh: np.ndarray, rh: np.ndarray, order: np.ndarray
    ) -> tuple[bool, np.ndarray | None]:
        """`weights_of` in one compiled pass, when every column of the rows and of each run
        is fixed-width without NULLs (`_as_bytes`): (True, its answer). (False, None) when
        a column is of another kind: the caller then probes and compares in numpy."""
        mine: list[np.ndarray] = []
        for column, dtype in zip(columns, self._dtypes, strict=False):
            view = _as_bytes(_comparable(column)) if column.dtype == dtype else None
            if view is None:
                return False, None
            mine.append(view)
        widths = [v.shape[1] for v in mine]
        stored: list[list[np.ndarray]] = []
        weights: list[np.ndarray] = []
        for run in self._runs:
            views, held = run.row_bytes(self._columns), run.numbers(WEIGHT)
            if views is None or held is None or [v.shape[1] for v in views] != widths:
                return False, None
            stored.append(views)
            weights.append(held)
        runs = self._runs
        found = spine.held_weights(
            [r.hashes for r in runs], [r.row_hashes for r in runs], [r.fences for r in runs], stored, weights,
            kh, rh, order, mine,
        )  # fmt: skip
        return True, found

    def _found_equal(self, found: list[tuple[_Run, np.ndarray, np.ndarray]], j: int, column: pl.Series) -> bool:
        """Whether column j of the stored rows `found` (each run with the probe rows and
        the run's positions that pair up) equals `column` at those probe rows: one numpy
        comparison over all the runs where both sides are `_comparable`, else run by run."""
        name = self._columns[j]
        mine = _comparable(column) if column.dtype == self._dtypes[j] else None
        stored = [s for run, _, _ in found if (s := run.comparable(name)) is not None] if mine is not None else []
        if mine is None or len(stored) < len(found):
            return all(rows_equal([run.frame.get_column(name)], idx, [column], row) for run, row, idx in found)
        theirs = np.concatenate([s[idx] for s, (_, _, idx) in zip(stored, found, strict=True)])
        rows = np.concatenate([row for _, row, _ in found])
        return np.array_equal(theirs, mine[rows], equal_nan=mine.dtype.kind == "f")

    def matched_columns(
        self,
        probe: pl.DataFrame,
        probe_cols: Sequence[str],
        columns: Sequence[str],
        key_hashes: np.ndarray | None = None,
    ) -> tuple[np.ndarray, list[np.ndarray]] | None:
        """`matches`, but only some stored columns of the pairs, as numpy arrays: the
        probe rows' positions and, in the same order, `columns` (plain numbers without
        NULLs, such as an iteration trace's iteration and weight). Keys of plain numbers
        are checked equal in numpy against the runs in place, so no stored row is gathered
        into a frame; other keys go through `matches`. `key_hashes`: the probe keys'
        `hash_rows`, when the caller has them. None as for `matches`."""
        if not self._key:
            return None
        keys = self._probe_keys(probe, probe_cols)
        if keys.height != probe.height:
            return None
        probe_keys = _plain_numbers(keys)
        if probe_keys is None:
            return self._matched_columns_of_frames(probe, probe_cols, columns)
        if keys.height == 0 or not self._runs:
            return np.empty(0, dtype=np.int64), [np.empty(0, dtype=np.int64) for _ in columns]
        if key_hashes is None or [probe.schema[c] for c in probe_cols] != self._key_dtypes:
            key_hashes = self._key_hashes(keys)  # (the caller's hashes are of uncast values)
        by_hash, sorted_hashes, found_in = self._probe(key_hashes)
        if not found_in:
            return np.empty(0, dtype=np.int64), [np.empty(0, dtype=np.int64) for _ in columns]
        names = (*self._key_names, *columns)
        stored: list[np.ndarray] = []
        gathered: list[list[np.ndarray]] = [[] for _ in names]
        for run, idx in found_in:
            stored.append(run.hashes[idx])
            for j, name in enumerate(names):
                plain = run.numbers(name)
                if plain is not None:
                    gathered[j].append(plain[idx])
                    continue
                values = run.frame.get_column(name)
                if j < len(self._key_names) and values.null_count():  # a NULL key stored: compared in polars
                    return self._matched_columns_of_frames(probe, probe_cols, columns)
                gathered[j].append(_values_at(values, idx))
        hashes = np.concatenate(stored) if len(stored) > 1 else stored[0]
        lo = np.searchsorted(sorted_hashes, hashes, side="left")
        counts = np.searchsorted(sorted_hashes, hashes, side="right") - lo
        probes = by_hash[_gather_ranges(lo, lo + counts)]
        out = [np.repeat(np.concatenate(parts) if len(parts) > 1 else parts[0], counts) for parts in gathered]
        k = len(self._key_names)
        for mine, theirs in zip(out[:k], probe_keys, strict=True):
            if not np.array_equal(mine, theirs[probes], equal_nan=mine.dtype.kind == "f"):
                return None
        return probes, out[k:]

    def _matched_columns_of_frames(
        self, probe: pl.DataFrame, probe_cols: Sequence[str], columns: Sequence[str]
    ) -> tuple[np.ndarray, list[np.ndarray]] | None:
        pairs = self.matches(probe, probe_cols)
        if pairs is None:
            return None
        positions, found = pairs
        return positions, [found.get_column(c).to_numpy() for c in columns]

    def matches(
        self, probe: pl.DataFrame, probe_cols: Sequence[str], known_keys: np.ndarray | None = None
    ) -> tuple[np.ndarray, pl.DataFrame] | None:
        """Every pair of a probe row and a stored row with equal keys (null-safe): the
        probe rows' positions, and the stored rows (c0.., w) in the same order. A stored
        row found in two runs pairs twice (its weights add up downstream). Cost
        O(|probe| · log|state| + pairs). None when the key is empty, a probe value does
        not fit the key's type, or different keys share a hash: the caller then joins
        through `lookup`, which handles each of those. `known_keys`: `hash_rows` of the
        probe columns, when the caller has them (used where those have the key's types)."""
        if not self._key:
            return None
        keys = self._probe_keys(probe, probe_cols)
        if keys.height != probe.height:
            return None
        if keys.height == 0 or not self._runs:
            return np.empty(0, dtype=np.int64), ZSet.empty(self._types).frame
        if known_keys is None or not self._typed_as_key(probe, probe_cols):
            known_keys = self._key_hashes(keys)
        key_hashes = known_keys
        compiled = self._gathered_matches(keys, key_hashes)
        if compiled is not None:
            return compiled if compiled[0] is not None else None
        by_hash, sorted_hashes, found_in = self._probe(key_hashes)
        if not found_in:
            return np.empty(0, dtype=np.int64), ZSet.empty(self._types).frame
        # the probe rows of each found hash, for every run at once: a few calls per
        # probe, not per run
        hashes = np.concatenate([run.hashes[idx] for run, idx in found_in]) if len(found_in) > 1 else None
        if hashes is None:
            hashes = found_in[0][0].hashes[found_in[0][1]]
        lo = np.searchsorted(sorted_hashes, hashes, side="left")
        counts = np.searchsorted(sorted_hashes, hashes, side="right") - lo
        probes = by_hash[_gather_ranges(lo, lo + counts)]
        rows: list[np.ndarray] = []
        start = 0
        for _, idx in found_in:
            rows.append(np.repeat(idx, counts[start : start + idx.size]))
            start += idx.size
        found = self._gather_numbers(found_in, rows) if sum(map(len, rows)) <= _NUMPY_GATHER_ROWS else None
        if found is None:
            parts = [take_frame(run.frame, r) for (run, _), r in zip(found_in, rows, strict=True)]
            found = concat_frames(parts) if len(parts) > 1 else parts[0]
        if not rows_equal([found.get_column(k) for k in self._key_names], None, keys.get_columns(), probes):
            return None
        return probes, found

    def _gathered_matches(
        self, keys: pl.DataFrame, key_hashes: np.ndarray
    ) -> tuple[np.ndarray, pl.DataFrame] | tuple[None, None] | None:
        """`matches` in one compiled probe and gather (spine.gather_matches), when the
        probe's keys and every stored column are plain numbers: (None, None) where
        `matches` answers None (different keys sharing a hash); None when the columns
        are of another kind, for the general path."""
        probe_keys = _plain_numbers(keys)
        if probe_keys is None:
            return None
        views: list[list[np.ndarray]] = []
        for run in self._runs:
            plain = run.plain_bytes(self._columns)
            if plain is None:
                return None
            views.append(plain)
        dtypes = [v.dtype for name in self._columns if (v := self._runs[0].numbers(name)) is not None]
        by_hash = argsort_hashes(key_hashes)
        probes, gathered, weights = spine.gather_matches(
            [r.hashes for r in self._runs],
            [r.fences for r in self._runs],
            views,
            [r.frame.get_column(WEIGHT).to_numpy() for r in self._runs],
            key_hashes[by_hash],
            by_hash,
        )
        values = [g.view(dtype).reshape(-1) for g, dtype in zip(gathered, dtypes, strict=True)]
        for k, theirs in zip(self._key, probe_keys, strict=True):
            if not np.array_equal(values[k], theirs[probes], equal_nan=theirs.dtype.kind == "f"):
                return None, None
        frame = frame_of_numbers(self._frame_columns, [*values, weights])
        return None if frame is None else (probes, frame)

    def _gather_numbers(self, found_in: list[tuple[_Run, np.ndarray]], rows: list[np.ndarray]) -> pl.DataFrame | None:
        """The runs' rows `rows` (one index array per run), as one frame built from the
        runs' numpy views when every column is plain numbers: one indexing per column and
        run, one frame. None otherwise (the caller gathers through polars)."""
        names = list(self._schema)
        columns: list[list[np.ndarray]] = [[] for _ in names]
        for (run, _), r in zip(found_in, rows, strict=True):
            for j, name in enumerate(names):
                values = run.numbers(name)
                if values is None:
                    return None
                columns[j].append(values[r])
        return frame_of_numbers(names, [np.concatenate(c) if len(c) > 1 else c[0] for c in columns])

    def column_where_hashed(self, probe: pl.DataFrame, probe_cols: Sequence[str], column: str) -> np.ndarray:
        """`column` of every stored row whose key hash is a probe key's hash: each true
        match (null-safe) and, on a hash collision, a few more. For callers that ask only
        whether something may match, where a false yes costs work and a no must be
        certain. One probe, and one column gathered: O(|probe| · log|state|)."""
        keys = self._probe_keys(probe, probe_cols)
        if keys.height == 0 or not self._runs:
            return np.empty(0, dtype=np.int64)
        _, _, found_in = self._probe(self._key_hashes(keys))
        parts = [
            plain[idx] if (plain := run.numbers(column)) is not None else _values_at(run.frame.get_column(column), idx)
            for run, idx in found_in
        ]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def _gather_found(self, found_in: list[tuple[_Run, np.ndarray]]) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
        """The rows at the probed positions of every run, one frame, with their key and row
        hashes (as stored in the runs: nothing is hashed again)."""
        parts = [take_frame(run.frame, idx) for run, idx in found_in]
        key_hashes = [run.hashes[idx] for run, idx in found_in]
        if len(parts) == 1:
            kh = key_hashes[0]
            return parts[0], kh, kh if self._hash_is_row else found_in[0][0].row_hashes[found_in[0][1]]
        kh = np.concatenate(key_hashes)
        rh = kh if self._hash_is_row else np.concatenate([run.row_hashes[idx] for run, idx in found_in])
        return concat_frames(parts), kh, rh

    def _consolidate_found(
        self, found: pl.DataFrame, kh: np.ndarray, rh: np.ndarray
    ) -> tuple[pl.DataFrame, np.ndarray] | None:
        """Rows found in several runs, consolidated by their stored hashes (one compiled
        sort; equal rows have equal hashes): the rows and their key hashes. None when two
        different rows share both hashes."""
        order, starts = hash_groups(kh, rh)
        if not groups_hold_equal_rows(found.get_columns()[:-1], order, starts):
            return None
        sums = np.add.reduceat(found.get_column(WEIGHT).to_numpy()[order], starts)
        keep = sums != 0
        rows = order[starts][keep]
        return take_weighted(found, rows, sums[keep]), kh[rows]

    def lookup_aligned(
        self, keys: Sequence[pl.Series], key_hashes: np.ndarray
    ) -> tuple[pl.DataFrame, np.ndarray] | None:
        """For distinct keys (columns typed as the trace's key, hashed by `hash_rows`): the
        consolidated stored rows with one of them, and for each key the position of its
        stored row, or -1. For callers that keep one row per key (an aggregate's groups).
        None (the caller uses `lookup`) when the types differ, two keys share a hash, a key
        has more than one stored row, or rows share hashes."""
        if not self._key or [c.dtype for c in keys] != self._key_dtypes:
            return None
        at = np.full(len(key_hashes), -1, dtype=np.int64)
        if not len(key_hashes) or not self._runs:
            return ZSet.empty(self._types).frame, at
        by_hash, sorted_hashes, found_in = self._probe(key_hashes)
        if bool((sorted_hashes[1:] == sorted_hashes[:-1]).any()):
            return None
        if not found_in:
            return ZSet.empty(self._types).frame, at
        found, kh, rh = self._gather_found(found_in)
        if len(found_in) > 1:
            consolidated = self._consolidate_found(found, kh, rh)
            if consolidated is None:
                return None
            found, kh = consolidated
        probe = by_hash[np.searchsorted(sorted_hashes, kh)]
        at[probe] = np.arange(len(probe))
        if int((at >= 0).sum()) != len(probe):
            return None  # two stored rows for one key
        if not rows_equal([found.get_column(k) for k in self._key_names], None, keys, probe):
            return None
        return found, at

    def lookup(self, probe: pl.DataFrame, probe_cols: Sequence[str], consolidated: bool = True) -> pl.DataFrame:
        """Stored rows (c0.., w; consolidated, no zero weight) whose key equals, null-safely,
        the key of some row of `probe`; `probe_cols` name the probe's key columns in the
        order of the trace's key. Cost O(|probe| · log|state| + matches).
        `consolidated=False` skips summing a row found in several runs, for callers that
        group the rows themselves.
        """
        if not self._key:
            return self.snapshot().frame if probe.height else ZSet.empty(self._types).frame
        keys = self._probe_keys(probe, probe_cols)
        if keys.height == 0 or not self._runs:
            return ZSet.empty(self._types).frame
        by_hash, sorted_hashes, found_in = self._probe(self._key_hashes(keys))
        if not found_in:
            return ZSet.empty(self._types).frame
        found, kh, rh = self._gather_found(found_in)
        # Equal hashes need not mean equal keys: check each candidate against a probe key
        # of its hash; on a collision, keep exactly the (null-safe) matches by a semi-join.
        probe_rows = by_hash[np.searchsorted(sorted_hashes, kh)]
        candidate_keys = [found.get_column(name) for name in self._key_names]
        exact = rows_equal(candidate_keys, None, keys.get_columns(), probe_rows)
        if not exact:
            found = found.join(keys, on=self._key_names, how="semi", nulls_equal=True)
        if len(found_in) > 1 and consolidated:
            by_hashes = self._consolidate_found(found, kh, rh) if exact else None
            found = by_hashes[0] if by_hashes is not None else _consolidate_frame(found, self._types)
        return self._ordered(found)

"""A fueled spine over fixed-width int64 columns, generic in its kernel backend (spike).

The backend `K` is bench/kernels/spine_nb.py (numba) or the compiled cspine.spine_c (Cython);
both expose the same kernels. Python here only sequences kernel calls (O(1) calls per run).

Levels as in differential dataflow's spine: level l holds nothing, one run (≤ 2^l rows), or
a merge in progress of two such runs. Each insert of n rows first advances every merge by
FUEL·n row steps, so no insert pays for a merge of the whole state; a run that lands on a
level still merging forces that merge to finish (counted in `forced`, should stay 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

SEED = 0x5EED_DB5
FUEL = 4


@dataclass(slots=True)
class Run:
    kh: np.ndarray  # uint64 key hashes
    rh: np.ndarray  # uint64 full-row hashes
    vals: np.ndarray  # int64[ncol, n]
    valid: np.ndarray  # uint8[ncol, n]
    w: np.ndarray  # int64[n]

    def __len__(self) -> int:
        return int(self.kh.shape[0])

    def take(self, idx: np.ndarray, w: np.ndarray | None = None) -> Run:
        return Run(self.kh[idx], self.rh[idx], self.vals[:, idx], self.valid[:, idx], self.w[idx] if w is None else w)

    def slice(self, a: int, b: int) -> Run:
        return Run(self.kh[a:b], self.rh[a:b], self.vals[:, a:b], self.valid[:, a:b], self.w[a:b])


def run_order(kh: np.ndarray, rh: np.ndarray, vals: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Permutation sorting rows by (kh, rh, (valid, value) per column) — the run order."""
    keys: list[np.ndarray] = []
    for c in range(vals.shape[0] - 1, -1, -1):
        keys += [vals[c], valid[c]]
    return np.lexsort((*keys, rh, kh))


def make_run(K: ModuleType, vals: np.ndarray, valid: np.ndarray, w: np.ndarray, nk: int) -> Run:
    """Consolidate a batch (NULL slots must hold 0) into a sorted run."""
    uvals = vals.view(np.uint64)
    kh = K.hash_cols(uvals, valid, 0, nk, SEED)
    rh = K.hash_cols(uvals, valid, 0, vals.shape[0], SEED)
    order = run_order(kh, rh, vals, valid)
    idx, wout = K.consolidate_sorted(kh, rh, vals, valid, w, order)
    return Run(kh, rh, vals, valid, w).take(idx, wout)


def _level(n: int) -> int:
    return max(0, (n - 1).bit_length())


@dataclass(slots=True)
class Merge:
    a: Run
    b: Run
    out: Run
    ia: int = 0
    ib: int = 0
    io: int = 0

    @staticmethod
    def start(a: Run, b: Run) -> Merge:
        n = len(a) + len(b)
        ncol = a.vals.shape[0]
        out = Run(np.empty(n, np.uint64), np.empty(n, np.uint64), np.empty((ncol, n), np.int64),
                  np.empty((ncol, n), np.uint8), np.empty(n, np.int64))
        return Merge(a, b, out)

    def done(self) -> bool:
        return self.ia == len(self.a) and self.ib == len(self.b)

    def step(self, K: ModuleType, fuel: int) -> None:
        a, b, o = self.a, self.b, self.out
        self.ia, self.ib, self.io = K.merge_step(a.kh, a.rh, a.vals, a.valid, a.w, b.kh, b.rh, b.vals, b.valid, b.w,
                                                 o.kh, o.rh, o.vals, o.valid, o.w, self.ia, self.ib, self.io, fuel)

    def result(self) -> Run:
        return self.out.slice(0, self.io)

    def parts(self) -> list[Run]:
        """The merge's contents right now as sorted runs (a merge can be probed mid-way)."""
        return [self.out.slice(0, self.io), self.a.slice(self.ia, len(self.a)), self.b.slice(self.ib, len(self.b))]


class Spine:
    def __init__(self, K: ModuleType, ncol: int, nk: int, fuel: int = FUEL) -> None:
        self.K, self.ncol, self.nk, self.fuel = K, ncol, nk, fuel
        self.levels: list[Run | Merge | None] = []
        self.forced = 0

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs())

    def runs(self) -> list[Run]:
        out: list[Run] = []
        for s in self.levels:
            if isinstance(s, Merge):
                out += [p for p in s.parts() if len(p)]
            elif s is not None:
                out.append(s)
        return out

    def insert_batch(self, vals: np.ndarray, valid: np.ndarray, w: np.ndarray) -> None:
        self.insert_run(make_run(self.K, vals, valid, w, self.nk))

    def insert_run(self, run: Run) -> None:
        n = len(run)
        if n == 0:
            return
        for lvl, s in enumerate(self.levels):
            if isinstance(s, Merge):
                s.step(self.K, self.fuel * n)
                if s.done():
                    self.levels[lvl] = None
                    self._place(s.result())
        self._place(run)

    def _place(self, run: Run) -> None:
        if len(run) == 0:
            return
        lvl = _level(len(run))
        while len(self.levels) <= lvl + 1:
            self.levels.append(None)
        s = self.levels[lvl]
        if s is None:
            self.levels[lvl] = run
        elif isinstance(s, Run):
            self.levels[lvl] = Merge.start(s, run)
        else:
            self.forced += 1
            s.step(self.K, len(s.a) + len(s.b))
            self.levels[lvl] = run
            self._place(s.result())

    def probe(self, pvals: np.ndarray, pvalid: np.ndarray) -> Run:
        """Stored rows (consolidated across runs) whose key equals one of the probe keys
        (pvals int64[nk, m], null-safe)."""
        K, nk = self.K, self.nk
        ph = K.hash_cols(pvals.view(np.uint64), pvalid, 0, nk, SEED)
        # distinct probe keys sorted by hash
        order = run_order(ph, ph, pvals, pvalid)
        idx, _ = K.consolidate_sorted(ph, ph, pvals, pvalid, np.ones(ph.shape[0], np.int64), order)
        ph, pvals, pvalid = ph[idx], pvals[:, idx], pvalid[:, idx]
        parts = []
        for r in self.runs():
            hit = K.probe_run(r.kh, r.vals, r.valid, nk, ph, pvals, pvalid)
            if hit.shape[0]:
                parts.append(r.take(hit))
        if not parts:
            return Run(np.empty(0, np.uint64), np.empty(0, np.uint64), np.empty((self.ncol, 0), np.int64),
                       np.empty((self.ncol, 0), np.uint8), np.empty(0, np.int64))
        # each part is in run order: consolidate by pairwise linear merges, not a sort
        while len(parts) > 1:
            merged = []
            for i in range(0, len(parts) - 1, 2):
                m = Merge.start(parts[i], parts[i + 1])
                m.step(K, len(parts[i]) + len(parts[i + 1]))
                merged.append(m.result())
            parts = merged + ([parts[-1]] if len(parts) % 2 else [])
        return parts[0]


class GroupSum:
    """SELECT k.., SUM(v), COUNT(*) GROUP BY k.. maintained over a spine of (k.., sum, count)."""

    def __init__(self, K: ModuleType, nk: int, fuel: int = FUEL) -> None:
        self.K, self.nk = K, nk
        self.state = Spine(K, nk + 2, nk, fuel)

    def update(self, vals: np.ndarray, valid: np.ndarray, w: np.ndarray, vcol: int) -> Run:
        """Apply a delta (key columns 0..nk-1, summed column vcol); returns the output change
        (old group rows with weight -1, new ones with +1) as a run."""
        K, nk = self.K, self.nk
        kh = K.hash_cols(vals.view(np.uint64), valid, 0, nk, SEED)
        keys: list[np.ndarray] = []
        for c in range(nk - 1, -1, -1):
            keys += [vals[c], valid[c]]
        order = np.lexsort((*keys, kh))
        rep, gs, gc = K.group_sum(kh, vals, valid, nk, order, vcol, w)
        gkh, gvals, gvalid = kh[rep], vals[:nk, rep], valid[:nk, rep]
        old = self.state.probe(gvals, gvalid)
        # probe output is in run order (kh first); the groups are sorted by kh too
        ev, evalid, ew = K.agg_combine(gkh, gvals, gvalid, gs, gc, old.kh, old.vals, old.valid, nk)
        change = make_run(K, ev, evalid, ew, nk)
        self.state.insert_run(change)
        return change

"""Spine kernels in numba (spike; see docs/kernels.md). Same signatures as cspine/spine_c.pyx.

A batch/run is: kh uint64[n] (key hash), rh uint64[n] (full-row hash), vals int64[ncol, n]
(each column contiguous; NULL slots hold 0), valid uint8[ncol, n], w int64[n]. Runs are
sorted by (kh, rh, then per column (valid, value)): a total order, so merges are exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)


@njit(cache=True, inline="always")
def _fmix(h: np.uint64) -> np.uint64:
    # murmur3's 64-bit finalizer: full avalanche, cheap
    h ^= h >> _S33
    h *= _M1
    h ^= h >> _S33
    h *= _M2
    h ^= h >> _S33
    return h


@njit(cache=True)
def hash_cols(uvals, valid, c0, c1, seed):  # type: ignore[no-untyped-def]
    """Seeded 64-bit hash of columns [c0, c1) of each row; NULL hashes apart from every value."""
    n = uvals.shape[1]
    out = np.empty(n, np.uint64)
    s = np.uint64(seed)
    for i in range(n):
        h = s
        for c in range(c0, c1):
            if valid[c, i]:
                h = _fmix((h ^ uvals[c, i]) * _K1)
            else:
                h = _fmix((h ^ _ZERO) * _K1 + _ONE)
        out[i] = h
    return out


@njit(cache=True, inline="always")
def _cmp(akh, arh, avals, avalid, i, bkh, brh, bvals, bvalid, j, ncol):  # type: ignore[no-untyped-def]
    if akh[i] != bkh[j]:
        return -1 if akh[i] < bkh[j] else 1
    if arh[i] != brh[j]:
        return -1 if arh[i] < brh[j] else 1
    for c in range(ncol):
        if avalid[c, i] != bvalid[c, j]:
            return -1 if avalid[c, i] < bvalid[c, j] else 1
        if avals[c, i] != bvals[c, j]:
            return -1 if avals[c, i] < bvals[c, j] else 1
    return 0


@njit(cache=True)
def consolidate_sorted(kh, rh, vals, valid, w, order):  # type: ignore[no-untyped-def]
    """Walk rows in `order` (sorted by the run order); sum weights of equal rows, drop zeros.
    Returns (row index of each distinct row, its summed weight)."""
    n = order.shape[0]
    ncol = vals.shape[0]
    idx = np.empty(n, np.int64)
    wout = np.empty(n, np.int64)
    m = 0
    i = 0
    while i < n:
        r = order[i]
        s = w[r]
        j = i + 1
        while j < n and _cmp(kh, rh, vals, valid, r, kh, rh, vals, valid, order[j], ncol) == 0:
            s += w[order[j]]
            j += 1
        if s != 0:
            idx[m] = r
            wout[m] = s
            m += 1
        i = j
    return idx[:m], wout[:m]


@njit(cache=True)
def merge_step(akh, arh, avals, avalid, aw, bkh, brh, bvals, bvalid, bw,
               okh, orh, ovals, ovalid, ow, ia, ib, io, fuel):  # type: ignore[no-untyped-def]
    """Advance the merge of runs a and b into o by at most `fuel` input rows; equal rows
    consolidate. Returns the new cursors (ia, ib, io)."""
    na = akh.shape[0]
    nb = bkh.shape[0]
    ncol = avals.shape[0]
    steps = 0
    while steps < fuel and (ia < na or ib < nb):
        if ia < na and ib < nb:
            c = _cmp(akh, arh, avals, avalid, ia, bkh, brh, bvals, bvalid, ib, ncol)
        elif ia < na:
            c = -1
        else:
            c = 1
        if c < 0:
            okh[io] = akh[ia]
            orh[io] = arh[ia]
            for k in range(ncol):
                ovals[k, io] = avals[k, ia]
                ovalid[k, io] = avalid[k, ia]
            ow[io] = aw[ia]
            io += 1
            ia += 1
            steps += 1
        elif c > 0:
            okh[io] = bkh[ib]
            orh[io] = brh[ib]
            for k in range(ncol):
                ovals[k, io] = bvals[k, ib]
                ovalid[k, io] = bvalid[k, ib]
            ow[io] = bw[ib]
            io += 1
            ib += 1
            steps += 1
        else:
            s = aw[ia] + bw[ib]
            if s != 0:
                okh[io] = akh[ia]
                orh[io] = arh[ia]
                for k in range(ncol):
                    ovals[k, io] = avals[k, ia]
                    ovalid[k, io] = avalid[k, ia]
                ow[io] = s
                io += 1
            ia += 1
            ib += 1
            steps += 2
    return ia, ib, io


@njit(cache=True)
def probe_run(kh, vals, valid, nk, ph, pvals, pvalid):  # type: ignore[no-untyped-def]
    """Rows of a run whose key equals (null-safely) one of the probe keys. The probe keys are
    distinct and sorted by their hash `ph`. Returns row indexes, ascending."""
    n = kh.shape[0]
    m = ph.shape[0]
    lo = np.empty(m, np.int64)
    hi = np.empty(m, np.int64)
    total = 0
    start = 0
    for j in range(m):
        h = ph[j]
        # the probe hashes ascend, so each search starts where the previous ended
        a = start
        b = n
        while a < b:
            mid = (a + b) >> 1
            if kh[mid] < h:
                a = mid + 1
            else:
                b = mid
        e = a
        while e < n and kh[e] == h:
            e += 1
        lo[j] = a
        hi[j] = e
        start = a
        if j == 0 or ph[j - 1] != h:
            total += e - a
    out = np.empty(total, np.int64)
    k = 0
    j = 0
    while j < m:
        j2 = j + 1
        while j2 < m and ph[j2] == ph[j]:
            j2 += 1
        for r in range(lo[j], hi[j]):
            for p in range(j, j2):
                same = True
                for c in range(nk):
                    if valid[c, r] != pvalid[c, p] or (valid[c, r] and vals[c, r] != pvals[c, p]):
                        same = False
                        break
                if same:
                    out[k] = r
                    k += 1
                    break
        j = j2
    return out[:k]


@njit(cache=True)
def group_sum(kh, vals, valid, nk, order, vcol, w):  # type: ignore[no-untyped-def]
    """Per distinct key (rows in `order`, sorted by (kh, keys)): Σ w·v over non-NULL v of
    column vcol, and Σ w. Returns (first row of each group, sums, counts); no-op groups dropped."""
    n = order.shape[0]
    rep = np.empty(n, np.int64)
    gs = np.empty(n, np.int64)
    gc = np.empty(n, np.int64)
    m = 0
    i = 0
    while i < n:
        r = order[i]
        s = 0
        cnt = 0
        j = i
        while j < n:
            q = order[j]
            if j > i:
                if kh[q] != kh[r]:
                    break
                same = True
                for c in range(nk):
                    if valid[c, q] != valid[c, r] or vals[c, q] != vals[c, r]:
                        same = False
                        break
                if not same:
                    break
            if valid[vcol, q]:
                s += vals[vcol, q] * w[q]
            cnt += w[q]
            j += 1
        if s != 0 or cnt != 0:
            rep[m] = r
            gs[m] = s
            gc[m] = cnt
            m += 1
        i = j
    return rep[:m], gs[:m], gc[:m]


@njit(cache=True)
def agg_combine(gkh, gvals, gvalid, gsum, gcnt, okh, ovals, ovalid, nk):  # type: ignore[no-untyped-def]
    """Groups (sorted by kh) with their delta (sum, count) against the old state rows
    (keys.., sum, count; weight 1; sorted by kh). Emits the state/view change: the old row
    with weight -1 and the new row with weight +1 (none when the group empties).
    Returns (vals int64[nk+2, e], valid uint8[nk+2, e], w int64[e])."""
    g = gkh.shape[0]
    no = okh.shape[0]
    ncol = nk + 2
    evals = np.zeros((ncol, 2 * g), np.int64)
    evalid = np.ones((ncol, 2 * g), np.uint8)
    ew = np.empty(2 * g, np.int64)
    e = 0
    o = 0
    for i in range(g):
        h = gkh[i]
        while o < no and okh[o] < h:
            o += 1
        found = -1
        q = o
        while q < no and okh[q] == h:
            same = True
            for c in range(nk):
                if ovalid[c, q] != gvalid[c, i] or ovals[c, q] != gvals[c, i]:
                    same = False
                    break
            if same:
                found = q
                break
            q += 1
        osum = 0
        ocnt = 0
        if found >= 0:
            for c in range(ncol):
                evals[c, e] = ovals[c, found]
                evalid[c, e] = ovalid[c, found]
            ew[e] = -1
            e += 1
            osum = ovals[nk, found]
            ocnt = ovals[nk + 1, found]
        ncnt = ocnt + gcnt[i]
        if ncnt != 0:
            for c in range(nk):
                evals[c, e] = gvals[c, i]
                evalid[c, e] = gvalid[c, i]
            evals[nk, e] = osum + gsum[i]
            evals[nk + 1, e] = ncnt
            ew[e] = 1
            e += 1
    return evals[:, :e].copy(), evalid[:, :e].copy(), ew[:e]

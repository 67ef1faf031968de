# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Spine kernels in Cython (spike; see docs/kernels.md). Same signatures as spine_nb.py."""

import numpy as np
from libc.stdint cimport int64_t, uint64_t, uint8_t

cdef uint64_t _M1 = 0xFF51AFD7ED558CCDULL
cdef uint64_t _M2 = 0xC4CEB9FE1A85EC53ULL
cdef uint64_t _K1 = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _fmix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= _M1
    h ^= h >> 33
    h *= _M2
    h ^= h >> 33
    return h


def hash_cols(const uint64_t[:, :] uvals, const uint8_t[:, :] valid, Py_ssize_t c0, Py_ssize_t c1, uint64_t seed):
    cdef Py_ssize_t n = uvals.shape[1], i, c
    out = np.empty(n, np.uint64)
    cdef uint64_t[::1] o = out
    cdef uint64_t h
    with nogil:
        for i in range(n):
            h = seed
            for c in range(c0, c1):
                if valid[c, i]:
                    h = _fmix((h ^ uvals[c, i]) * _K1)
                else:
                    h = _fmix(h * _K1 + 1)
            o[i] = h
    return out


cdef inline int _cmp(const uint64_t[::1] akh, const uint64_t[::1] arh, const int64_t[:, :] avals,
                     const uint8_t[:, :] avalid, Py_ssize_t i, const uint64_t[::1] bkh, const uint64_t[::1] brh,
                     const int64_t[:, :] bvals, const uint8_t[:, :] bvalid, Py_ssize_t j,
                     Py_ssize_t ncol) noexcept nogil:
    cdef Py_ssize_t c
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


def consolidate_sorted(const uint64_t[::1] kh, const uint64_t[::1] rh, const int64_t[:, :] vals,
                       const uint8_t[:, :] valid, const int64_t[::1] w, const int64_t[::1] order):
    cdef Py_ssize_t n = order.shape[0], ncol = vals.shape[0], m = 0, i = 0, j
    idx_a = np.empty(n, np.int64)
    w_a = np.empty(n, np.int64)
    cdef int64_t[::1] idx = idx_a, wout = w_a
    cdef int64_t r, s
    with nogil:
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
    return idx_a[:m], w_a[:m]


cdef inline void _copy(const uint64_t[::1] kh, const uint64_t[::1] rh, const int64_t[:, :] vals,
                       const uint8_t[:, :] valid, Py_ssize_t i, int64_t w, uint64_t[::1] okh, uint64_t[::1] orh,
                       int64_t[:, :] ovals, uint8_t[:, :] ovalid, int64_t[::1] ow, Py_ssize_t io,
                       Py_ssize_t ncol) noexcept nogil:
    cdef Py_ssize_t k
    okh[io] = kh[i]
    orh[io] = rh[i]
    for k in range(ncol):
        ovals[k, io] = vals[k, i]
        ovalid[k, io] = valid[k, i]
    ow[io] = w


def merge_step(const uint64_t[::1] akh, const uint64_t[::1] arh, const int64_t[:, :] avals,
               const uint8_t[:, :] avalid, const int64_t[::1] aw,
               const uint64_t[::1] bkh, const uint64_t[::1] brh, const int64_t[:, :] bvals,
               const uint8_t[:, :] bvalid, const int64_t[::1] bw,
               uint64_t[::1] okh, uint64_t[::1] orh, int64_t[:, :] ovals, uint8_t[:, :] ovalid, int64_t[::1] ow,
               Py_ssize_t ia, Py_ssize_t ib, Py_ssize_t io, Py_ssize_t fuel):
    cdef Py_ssize_t na = akh.shape[0], nb = bkh.shape[0], ncol = avals.shape[0], steps = 0
    cdef int c
    cdef int64_t s
    with nogil:
        while steps < fuel and (ia < na or ib < nb):
            if ia < na and ib < nb:
                c = _cmp(akh, arh, avals, avalid, ia, bkh, brh, bvals, bvalid, ib, ncol)
            elif ia < na:
                c = -1
            else:
                c = 1
            if c < 0:
                _copy(akh, arh, avals, avalid, ia, aw[ia], okh, orh, ovals, ovalid, ow, io, ncol)
                io += 1
                ia += 1
                steps += 1
            elif c > 0:
                _copy(bkh, brh, bvals, bvalid, ib, bw[ib], okh, orh, ovals, ovalid, ow, io, ncol)
                io += 1
                ib += 1
                steps += 1
            else:
                s = aw[ia] + bw[ib]
                if s != 0:
                    _copy(akh, arh, avals, avalid, ia, s, okh, orh, ovals, ovalid, ow, io, ncol)
                    io += 1
                ia += 1
                ib += 1
                steps += 2
    return ia, ib, io


def probe_run(const uint64_t[::1] kh, const int64_t[:, :] vals, const uint8_t[:, :] valid, Py_ssize_t nk,
              const uint64_t[::1] ph, const int64_t[:, :] pvals, const uint8_t[:, :] pvalid):
    cdef Py_ssize_t n = kh.shape[0], m = ph.shape[0], total = 0, start = 0, j, j2, a, b, mid, e, k = 0, r, p, c
    lo_a = np.empty(m, np.int64)
    hi_a = np.empty(m, np.int64)
    cdef int64_t[::1] lo = lo_a, hi = hi_a
    cdef uint64_t h
    cdef bint same
    with nogil:
        for j in range(m):
            h = ph[j]
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
    out_a = np.empty(total, np.int64)
    cdef int64_t[::1] out = out_a
    with nogil:
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
    return out_a[:k]


def group_sum(const uint64_t[::1] kh, const int64_t[:, :] vals, const uint8_t[:, :] valid, Py_ssize_t nk,
              const int64_t[::1] order, Py_ssize_t vcol, const int64_t[::1] w):
    cdef Py_ssize_t n = order.shape[0], m = 0, i = 0, j, c
    rep_a = np.empty(n, np.int64)
    gs_a = np.empty(n, np.int64)
    gc_a = np.empty(n, np.int64)
    cdef int64_t[::1] rep = rep_a, gs = gs_a, gc = gc_a
    cdef int64_t r, q, s, cnt
    cdef bint same
    with nogil:
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
    return rep_a[:m], gs_a[:m], gc_a[:m]


def agg_combine(const uint64_t[::1] gkh, const int64_t[:, :] gvals, const uint8_t[:, :] gvalid,
                const int64_t[::1] gsum, const int64_t[::1] gcnt, const uint64_t[::1] okh,
                const int64_t[:, :] ovals, const uint8_t[:, :] ovalid, Py_ssize_t nk):
    cdef Py_ssize_t g = gkh.shape[0], no = okh.shape[0], ncol = nk + 2, e = 0, o = 0, i, q, c, found
    ev_a = np.zeros((ncol, 2 * g), np.int64)
    evalid_a = np.ones((ncol, 2 * g), np.uint8)
    ew_a = np.empty(2 * g, np.int64)
    cdef int64_t[:, :] ev = ev_a
    cdef uint8_t[:, :] evalid = evalid_a
    cdef int64_t[::1] ew = ew_a
    cdef uint64_t h
    cdef int64_t osum, ocnt, ncnt
    cdef bint same
    with nogil:
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
                    ev[c, e] = ovals[c, found]
                    evalid[c, e] = ovalid[c, found]
                ew[e] = -1
                e += 1
                osum = ovals[nk, found]
                ocnt = ovals[nk + 1, found]
            ncnt = ocnt + gcnt[i]
            if ncnt != 0:
                for c in range(nk):
                    ev[c, e] = gvals[c, i]
                    evalid[c, e] = gvalid[c, i]
                ev[nk, e] = osum + gsum[i]
                ev[nk + 1, e] = ncnt
                ew[e] = 1
                e += 1
    return ev_a[:, :e].copy(), evalid_a[:, :e].copy(), ew_a[:e]

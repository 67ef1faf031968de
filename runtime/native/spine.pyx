# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Compiled kernels of the spine (runtime/trace.py): sorting, merging and probing runs.

A run is ordered by (key hash, row hash); both are uint64 arrays beside the run's rows.
Each kernel is one call per run operation, whatever the number of rows. Most work on the
two hash arrays only, and the caller gathers the rows (Arrow columns) once with the index
the kernel returns; those that read rows (`held_weights`, `gather_matches`, `merge_rows`)
take fixed-width columns as (rows, width) bytes. The kernels release the GIL, so a merge
on the merger thread runs beside the step.
"""

import numpy as np

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <cstring>
    #include <vector>
    struct dbspc_kri { uint64_t k, r; int64_t i; };
    static inline bool dbspc_kri_less(const dbspc_kri& x, const dbspc_kri& y) {
        if (x.k != y.k) return x.k < y.k;
        if (x.r != y.r) return x.r < y.r;
        return x.i < y.i;
    }
    static inline void dbspc_insertion_sort(dbspc_kri* a, int64_t n) {
        for (int64_t i = 1; i < n; i++) {
            dbspc_kri x = a[i];
            int64_t j = i;
            while (j > 0 && dbspc_kri_less(x, a[j - 1])) { a[j] = a[j - 1]; j--; }
            a[j] = x;
        }
    }
    /* The (kh[i], rh[i], i) triples into `a`, ordered by k, then r, then i (so the order
       is deterministic). Hashes are uniform, so the triples are scattered into ~n/2
       buckets by the top bits of k (a counting pass, then one write each) and every
       bucket is nearly sorted already: when none holds more than 32 triples (no key
       hash repeated much) one insertion pass over the whole array finishes it, each
       triple moving only inside its bucket; otherwise each bucket is sorted alone. About
       5x faster than bucketing by 10 bits and sorting each bucket (65,536 rows). */
    static void dbspc_sort_kri(const uint64_t* kh, const uint64_t* rh, dbspc_kri* a, int64_t n) {
        int bits = 1;
        while (bits < 24 && ((int64_t)1 << (bits + 1)) <= n) bits++;
        const int shift = 64 - bits;
        const int64_t nb = (int64_t)1 << bits;
        std::vector<int64_t> end(nb + 1, 0);
        for (int64_t i = 0; i < n; i++) end[(kh[i] >> shift) + 1]++;
        int64_t largest = 0;
        for (int64_t b = 0; b < nb; b++) {
            largest = std::max(largest, end[b + 1]);
            end[b + 1] += end[b];
        }
        // end[b] is bucket b's start; each write moves it on, to bucket b's end
        for (int64_t i = 0; i < n; i++) {
            dbspc_kri& d = a[end[kh[i] >> shift]++];
            d.k = kh[i];
            d.r = rh[i];
            d.i = i;
        }
        if (largest <= 32) { dbspc_insertion_sort(a, n); return; }
        for (int64_t b = 0, first = 0; b < nb; first = end[b++]) {
            const int64_t m = end[b] - first;
            if (m > 32) std::sort(a + first, a + end[b], dbspc_kri_less);
            else if (m > 1) dbspc_insertion_sort(a + first, m);
        }
    }
    """
    ctypedef struct dbspc_kri:
        uint64_t k
        uint64_t r
        int64_t i
    void dbspc_sort_kri(const uint64_t* kh, const uint64_t* rh, dbspc_kri* a, int64_t n) nogil


def sort_groups(const uint64_t[::1] kh, const uint64_t[::1] rh):
    """The run order of rows with key hashes `kh` and row hashes `rh`: (order, starts).

    `order` sorts the rows by (kh, rh, row number); `starts` are the positions in `order`
    where a new (kh, rh) pair begins. Rows of one group are equal rows unless two rows
    share both hashes, which the caller checks."""
    cdef Py_ssize_t n = kh.shape[0], i, g = 0
    order_a = np.empty(n, np.int64)
    starts_a = np.empty(n, np.int64)
    cdef int64_t[::1] order = order_a, starts = starts_a
    if n == 0:
        return order_a, starts_a
    cdef dbspc_kri* t = <dbspc_kri*> malloc(n * sizeof(dbspc_kri))
    if t == NULL:
        raise MemoryError()
    with nogil:
        dbspc_sort_kri(&kh[0], &rh[0], t, n)
        for i in range(n):
            order[i] = t[i].i
            if i == 0 or t[i].k != t[i - 1].k or t[i].r != t[i - 1].r:
                starts[g] = i
                g += 1
    free(t)
    return order_a, starts_a[:g]


cdef inline Py_ssize_t _slot(
    const uint64_t[::1] right, const vector[int64_t]& head, uint64_t h, int shift, Py_ssize_t mask
) noexcept nogil:
    """The slot of hash `h` in match_hashes' table: where a row of `right` with that hash
    heads its chain, or the empty slot it would take. The hashes are uniform, so their
    top bits pick the first slot to look at."""
    cdef Py_ssize_t s = <Py_ssize_t>(h >> shift)
    while head[s] != -1 and right[head[s]] != h:
        s = (s + 1) & mask
    return s


def match_hashes(const uint64_t[::1] left, const uint64_t[::1] right):
    """The pairs (i, j) with left[i] == right[j], as (li, ri): li ascending and, for one
    i, j ascending. A join's pairing of two batches by key hash (runtime/kernels/join.py)
    in one call: a table of `right`'s distinct hashes, each heading the chain of its rows
    (linked through `nxt`, prepended from the last row so that a chain runs in row
    order), then one pass of `left` over it. It replaces a sort of `right`, two binary
    searches and three gathers (~0.3 ms for 1,000 rows a side, against ~20 us)."""
    cdef Py_ssize_t n = left.shape[0], m = right.shape[0], i, j, s
    cdef Py_ssize_t cap = 4
    cdef int bits = 2
    while cap < 2 * m:
        cap <<= 1
        bits += 1
    cdef int shift = 64 - bits
    cdef Py_ssize_t mask = cap - 1
    cdef vector[int64_t] head, nxt, found_l, found_r
    if n == 0 or m == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    head.assign(cap, -1)
    nxt.assign(m, -1)
    with nogil:
        for j in range(m - 1, -1, -1):
            s = _slot(right, head, right[j], shift, mask)
            nxt[j] = head[s]
            head[s] = j
        for i in range(n):
            j = head[_slot(right, head, left[i], shift, mask)]
            while j != -1:
                found_l.push_back(i)
                found_r.push_back(j)
                j = nxt[j]
    li_a = np.empty(found_l.size(), np.int64)
    ri_a = np.empty(found_l.size(), np.int64)
    cdef int64_t[::1] li = li_a, ri = ri_a
    if found_l.size():
        memcpy(&li[0], found_l.data(), found_l.size() * sizeof(int64_t))
        memcpy(&ri[0], found_r.data(), found_r.size() * sizeof(int64_t))
    return li_a, ri_a


def merge_plan(const uint64_t[::1] akh, const uint64_t[::1] arh, const uint64_t[::1] bkh, const uint64_t[::1] brh):
    """Merge two runs, each sorted by (kh, rh): (take, pa, pb, slot, simple).

    `take` indexes concat(a, b) in the merged order. A (kh, rh) pair found once in a and
    once in b is a row that may cancel: it is taken once (a's copy), and listed as
    pa[j], pb[j] (indexes into a and b) with slot[j] its position in `take`; the caller
    checks the two rows are equal and adds their weights. `simple` is False when some
    pair occurs more than once in a run (only on a hash collision): the caller then
    consolidates the rows itself."""
    cdef Py_ssize_t na = akh.shape[0], nb = bkh.shape[0], i = 0, j = 0, m = 0, p = 0
    take_a = np.empty(na + nb, np.int64)
    pa_a = np.empty(min(na, nb), np.int64)
    pb_a = np.empty(min(na, nb), np.int64)
    slot_a = np.empty(min(na, nb), np.int64)
    cdef int64_t[::1] take = take_a, pa = pa_a, pb = pb_a, slot = slot_a
    cdef bint simple = True
    with nogil:
        while i < na and j < nb:
            if akh[i] < bkh[j] or (akh[i] == bkh[j] and arh[i] < brh[j]):
                take[m] = i
                i += 1
            elif akh[i] == bkh[j] and arh[i] == brh[j]:
                if (i + 1 < na and akh[i + 1] == akh[i] and arh[i + 1] == arh[i]) or (
                    j + 1 < nb and bkh[j + 1] == bkh[j] and brh[j + 1] == brh[j]
                ):
                    simple = False
                    break
                pa[p] = i
                pb[p] = j
                slot[p] = m
                p += 1
                take[m] = i
                i += 1
                j += 1
            else:
                take[m] = na + j
                j += 1
            m += 1
        if simple:
            while i < na:
                take[m] = i
                i += 1
                m += 1
            while j < nb:
                take[m] = na + j
                j += 1
                m += 1
    return take_a[:m], pa_a[:p], pb_a[:p], slot_a[:p], simple


# One fence every FENCE_STEP hashes of a run: the fences of a 1M-row run are 128 KB, so a
# probe searches them in cache and then reads one block of the run, where a binary search
# of the whole run would miss the cache at each of its last ~10 steps.
cdef enum:
    _STEP = 64
FENCE_STEP = _STEP


def fences(const uint64_t[::1] h):
    """Every FENCE_STEP-th hash of a sorted run (h[0], h[64], ...): its probe index."""
    return np.asarray(h[::FENCE_STEP]).copy()


cdef extern from *:
    """
    static inline void dbspc_prefetch(const void* p) { __builtin_prefetch(p); }
    """
    void dbspc_prefetch(const void* p) noexcept nogil


# A probe reads its block only after the probe this many ahead of it has asked for that
# block's cache lines: a cold block of a large run costs a few dependent misses to
# search, and these now overlap across probes (500 pair probes of a cold 1M-row run:
# 212-222 -> 155-175 us; key probes 150 -> 113-133 us).
cdef enum:
    _AHEAD = 8


cdef inline void _fence_blocks(const uint64_t[::1] fe, const uint64_t[::1] wanted, int64_t[::1] out) noexcept nogil:
    """For each of the ascending `wanted` hashes, the fence f such that the run's first
    hash >= it lies in block ((f - 1) * STEP, f * STEP]. Probes dense among the fences
    (one every 64 fences or closer) walk them in order, which the hardware streams;
    sparse ones gallop on from the last probe's fence, whose dependent reads of cold
    lines would cost more than the walk if they were dense."""
    cdef Py_ssize_t nf = fe.shape[0], m = wanted.shape[0], q, k, hi, mid, f = 0
    cdef uint64_t x
    if nf <= 64 * m:
        for q in range(m):
            x = wanted[q]
            while f < nf and fe[f] < x:
                f += 1
            out[q] = f
        return
    for q in range(m):
        x = wanted[q]
        if f > 0:
            f -= 1  # this probe may start in the last one's block again
        k = 1
        hi = f
        while hi < nf and fe[hi] < x:
            f = hi + 1
            hi = f + k
            k *= 2
        if hi > nf:
            hi = nf
        while f < hi:
            mid = (f + hi) >> 1
            if fe[mid] < x:
                f = mid + 1
            else:
                hi = mid
        out[q] = f


cdef inline void _ask_block(const uint64_t* h, Py_ssize_t n, Py_ssize_t f) noexcept nogil:
    """Ask for the cache lines of block f of the run `h` (n hashes)."""
    cdef Py_ssize_t lo = (f - 1) * _STEP + 1 if f > 0 else 0, hi = f * _STEP if f * _STEP < n else n, i
    i = lo
    while i < hi:
        dbspc_prefetch(h + i)
        i += 8  # (64-byte lines of 8 hashes)
    if hi > lo:
        dbspc_prefetch(h + hi - 1)


cdef inline Py_ssize_t _first_in_block(const uint64_t[::1] h, Py_ssize_t f, uint64_t x) noexcept nogil:
    """The first position of the sorted run `h` whose hash is >= x, given its block f
    (`_fence_blocks`); the run's length if none."""
    cdef Py_ssize_t n = h.shape[0], lo = (f - 1) * _STEP + 1 if f > 0 else 0, hi, mid
    hi = f * _STEP if f * _STEP < n else n
    while lo < hi:
        mid = (lo + hi) >> 1
        if h[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef Py_ssize_t _spans(
    const uint64_t[::1] h, const uint64_t[::1] fe, const uint64_t[::1] wanted, int64_t[::1] blocks,
    int64_t* starts, int64_t* counts
) noexcept nogil:
    """Where each of the ascending `wanted` hashes (repeats allowed) has its rows in the
    sorted run `h` (fences `fe`): they start at starts[q] and are counts[q] long (both
    zeroed by the caller: a hash past the run's last keeps 0); returns the sum of the
    counts. Each probe's block is asked for a few probes ahead."""
    cdef Py_ssize_t m = wanted.shape[0], n = h.shape[0], q, lo, total = 0
    cdef uint64_t x
    if n == 0 or m == 0:
        return 0
    _fence_blocks(fe, wanted, blocks)
    for q in range(min(m, _AHEAD)):
        _ask_block(&h[0], n, blocks[q])
    for q in range(m):
        if q + _AHEAD < m:
            _ask_block(&h[0], n, blocks[q + _AHEAD])
        x = wanted[q]
        if q and x == wanted[q - 1]:  # a repeated key: the same rows
            starts[q] = starts[q - 1]
            counts[q] = counts[q - 1]
            total += counts[q]
            continue
        lo = _first_in_block(h, blocks[q], x)
        if lo >= n:
            break
        starts[q] = lo
        while lo < n and h[lo] == x:
            lo += 1
        counts[q] = lo - starts[q]
        total += counts[q]
    return total


def probe_fenced(list runs, list run_fences, const uint64_t[::1] wanted):
    """For each run's sorted key hashes in `runs`, the positions whose hash is one of
    `wanted` (sorted, distinct), found through the run's fences (`fences(run)`): a list
    of int64 arrays, one per run, ascending."""
    cdef Py_ssize_t m = wanted.shape[0], q, i, t, total
    cdef int64_t[::1] blocks = np.empty(max(1, m), np.int64)
    starts_a = np.zeros(max(1, m), np.int64)
    counts_a = np.zeros(max(1, m), np.int64)
    cdef int64_t[::1] starts = starts_a
    cdef int64_t[::1] counts = counts_a
    cdef int64_t[::1] out
    cdef const uint64_t[::1] h
    cdef const uint64_t[::1] fe
    found = []
    for run, fence in zip(runs, run_fences):
        h, fe = run, fence  # (typed views made with the GIL)
        starts[:] = 0
        counts[:] = 0
        with nogil:
            total = _spans(h, fe, wanted, blocks, &starts[0], &counts[0])
        buf = np.empty(total, np.int64)
        out = buf
        t = 0
        with nogil:
            for q in range(m):
                for i in range(counts[q]):
                    out[t] = starts[q] + i
                    t += 1
        found.append(buf)
    return found


cdef Py_ssize_t _pairs(
    const uint64_t[::1] h, const uint64_t[::1] r, const uint64_t[::1] fe, const uint64_t[::1] wkh,
    const uint64_t[::1] wrh, int64_t[::1] blocks, int64_t* out_q, int64_t* out_p
) noexcept nogil:
    """Where the run (key hashes h, row hashes r, fences fe) holds each wanted (key hash,
    row hash) pair (sorted, distinct): the pairs' numbers into out_q and the run's
    positions into out_p (room for every pair); returns how many. A run holds a row
    once, so a pair is at one position at most, and a key with many rows costs a search
    among them, not a scan.

    Two passes, so that a probe asks memory only for lines it reads: the first finds each
    pair's key among the key hashes (its block of h asked for a few probes ahead), the
    second its row among the key's rows (the line of r where they start asked ahead).
    Asking for the block of r with the block of h fetched 8 lines of r a probe where
    1-2 are read, and a probe of a large run is bound by the lines it fetches."""
    cdef Py_ssize_t m = wkh.shape[0], n = h.shape[0], q, j, lo, hi, mid, k, found = 0, total = 0
    cdef uint64_t x, y
    if n == 0 or m == 0:
        return 0
    _fence_blocks(fe, wkh, blocks)
    for q in range(min(m, _AHEAD)):
        _ask_block(&h[0], n, blocks[q])
    for q in range(m):
        if q + _AHEAD < m:
            _ask_block(&h[0], n, blocks[q + _AHEAD])
        x = wkh[q]
        lo = _first_in_block(h, blocks[q], x)
        if lo >= n:
            break
        if h[lo] == x:  # the key's first row
            out_q[found] = q
            out_p[found] = lo
            found += 1
    for j in range(min(found, _AHEAD)):
        dbspc_prefetch(&r[out_p[j]])
    for j in range(found):  # (writes at total <= j: each entry is read before it is reused)
        if j + _AHEAD < found:
            dbspc_prefetch(&r[out_p[j + _AHEAD]])
        q = out_q[j]
        lo = out_p[j]
        x = wkh[q]
        y = wrh[q]
        # gallop over the key's rows to the first row hash >= y
        k = 1
        hi = lo
        while hi < n and h[hi] == x and r[hi] < y:
            lo = hi + 1
            hi = lo + k
            k *= 2
        if hi > n:
            hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if h[mid] == x and r[mid] < y:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and h[lo] == x and r[lo] == y:
            out_q[total] = q
            out_p[total] = lo
            total += 1
    return total


def probe_pairs(list runs, list run_rows, list run_fences, const uint64_t[::1] wkh, const uint64_t[::1] wrh):
    """For each run (key hashes `runs[i]`, row hashes `run_rows[i]`, ordered by both;
    fences `run_fences[i]`), where it holds a wanted (key hash, row hash) pair: a list of
    (wanted positions, run positions) int64 arrays, one pair per run. `wkh`, `wrh`: the
    wanted pairs, sorted by (key hash, row hash) and distinct."""
    cdef Py_ssize_t m = wkh.shape[0], total, cap
    cdef int64_t[::1] out_q
    cdef int64_t[::1] out_p
    cdef int64_t[::1] blocks = np.empty(m, np.int64)
    found = []
    for run, rows, fence in zip(runs, run_rows, run_fences):
        cap = max(1, m)  # (_pairs' first pass keeps up to one entry a pair)
        qs = np.empty(cap, np.int64)
        ps = np.empty(cap, np.int64)
        out_q = qs
        out_p = ps
        total = _pairs(run, rows, fence, wkh, wrh, blocks, &out_q[0], &out_p[0])
        found.append((qs[:total], ps[:total]))
    return found


cdef inline bint _same_row(
    vector[const unsigned char*]& a, Py_ssize_t i, vector[const unsigned char*]& b, Py_ssize_t j,
    vector[Py_ssize_t]& width
) noexcept nogil:
    """Whether row i of the columns `a` and row j of `b` (each a pointer to (rows, width)
    bytes) hold the same bytes."""
    cdef Py_ssize_t c
    for c in range(<Py_ssize_t>width.size()):
        if memcmp(a[c] + i * width[c], b[c] + j * width[c], width[c]) != 0:
            return False
    return True


def held_weights(
    list runs, list run_rows, list run_fences, list run_columns, list run_weights,
    const uint64_t[::1] wkh, const uint64_t[::1] wrh, const int64_t[::1] order, list columns
):
    """The weight each run holds for each of n probe rows, summed over the runs (0 where
    none holds it): `probe_pairs` and the check that each pair's rows are equal, in one
    pass. `wkh`, `wrh`: the rows' (key hash, row hash) pairs, sorted and distinct, and
    `order[q]` the row of pair q. Rows are compared as bytes: `columns` holds the probe
    rows' columns and `run_columns[i]` run i's, each a C-contiguous (rows, width) uint8
    array of fixed-width values without NULLs, and `run_weights[i]` its int64 weights.
    None when the bytes of a pair differ (two rows that share both hashes, or floats
    equal as values but not as bytes): the caller then asks the exact path."""
    cdef Py_ssize_t m = wkh.shape[0], c, total, j, nc = len(columns), pos, row, ahead
    cdef int64_t[::1] out_q
    cdef int64_t[::1] out_p
    cdef int64_t[::1] blocks = np.empty(m, np.int64)
    cdef const int64_t[::1] w
    cdef const unsigned char[:, ::1] column
    cdef vector[const unsigned char*] mine, theirs
    cdef vector[Py_ssize_t] width
    weights_a = np.zeros(m, np.int64)
    cdef int64_t[::1] out = weights_a
    cdef bint same = True
    for column in columns:
        mine.push_back(&column[0, 0] if column.shape[0] else NULL)
        width.push_back(column.shape[1])
    qs = np.empty(max(1, m), np.int64)
    ps = np.empty(max(1, m), np.int64)
    out_q = qs
    out_p = ps
    cdef const uint64_t[::1] h
    cdef const uint64_t[::1] r
    cdef const uint64_t[::1] fe
    for run, rows, fence, stored, held in zip(runs, run_rows, run_fences, run_columns, run_weights):
        h, r, fe, w = run, rows, fence, held  # (typed views made with the GIL)
        theirs.clear()
        for column in stored:
            theirs.push_back(&column[0, 0] if column.shape[0] else NULL)
        with nogil:
            total = _pairs(h, r, fe, wkh, wrh, blocks, &out_q[0], &out_p[0])
            # each pair's stored row is asked for a few pairs ahead: its columns are
            # cold lines of a large run, as its block was
            for j in range(total):
                ahead = j + _AHEAD
                if ahead < total:
                    for c in range(nc):
                        dbspc_prefetch(theirs[c] + out_p[ahead] * width[c])
                    dbspc_prefetch(&w[out_p[ahead]])
                pos = out_p[j]
                row = order[out_q[j]]
                if not _same_row(theirs, pos, mine, row, width):
                    same = False
                    break
                out[row] += w[pos]
        if not same:
            return None
    return weights_a


cdef inline void _copy_value(unsigned char* dst, const unsigned char* src, Py_ssize_t width) noexcept nogil:
    # the common widths as one load and store; memcpy's call would cost more than the copy
    if width == 8:
        (<uint64_t*>dst)[0] = (<const uint64_t*>src)[0]
    elif width == 16:  # (a decimal128)
        (<uint64_t*>dst)[0] = (<const uint64_t*>src)[0]
        (<uint64_t*>dst)[1] = (<const uint64_t*>src)[1]
    elif width == 4:
        (<uint32_t*>dst)[0] = (<const uint32_t*>src)[0]
    else:
        memcpy(dst, src, width)


cdef void _gather_two(
    unsigned char* out, const unsigned char* a, const unsigned char* b, Py_ssize_t width,
    const int64_t* take, Py_ssize_t m, Py_ssize_t na
) noexcept nogil:
    """out[t] = (a or b)[take[t]] (take indexes a's rows, then b's after na): a column's
    gather in its own loop, its pointers in registers (stores through char pointers in a
    loop over every column made the compiler reload them all at each row), and the side
    picked by indexing, not a branch (the sides of merged hashes alternate at random: a
    branch mispredicted at every other row)."""
    cdef Py_ssize_t t, k, side
    cdef const unsigned char* base[2]
    base[0] = a
    base[1] = b
    if width == 8:
        for t in range(m):
            k = take[t]
            side = k >= na
            (<uint64_t*>out)[t] = (<const uint64_t*>base[side])[k - side * na]
    elif width == 4:
        for t in range(m):
            k = take[t]
            side = k >= na
            (<uint32_t*>out)[t] = (<const uint32_t*>base[side])[k - side * na]
    elif width == 16:
        for t in range(m):
            k = take[t]
            side = k >= na
            k = 2 * (k - side * na)
            (<uint64_t*>out)[2 * t] = (<const uint64_t*>base[side])[k]
            (<uint64_t*>out)[2 * t + 1] = (<const uint64_t*>base[side])[k + 1]
    else:
        for t in range(m):
            k = take[t]
            side = k >= na
            memcpy(out + t * width, base[side] + (k - side * na) * width, width)


def merge_rows(
    const uint64_t[::1] akh, const uint64_t[::1] arh, const uint64_t[::1] bkh, const uint64_t[::1] brh,
    list a_columns, list b_columns, const int64_t[::1] aw, const int64_t[::1] bw, bint one_hash
):
    """Two runs merged without the GIL: `merge_plan`, the check that the rows of each
    pair of equal hashes are equal, the sum of their weights and the gather of the
    merged rows, where `merge_plan` leaves the last three to the caller (~10 numpy and
    polars calls). Columns as `held_weights` reads them: C-contiguous (rows, width)
    uint8 arrays of fixed-width values without NULLs, the same widths in both runs.
    Returns (key hashes, row hashes, columns, weights) of the merged run, rows whose
    weights cancel left out; `one_hash`: the row hash is the key hash, and one array
    serves both. None where `merge_plan` would not be simple or a pair's bytes differ
    (two rows sharing both hashes, or floats equal as values but not as bytes): the
    caller then merges through the exact path."""
    cdef Py_ssize_t na = akh.shape[0], nb = bkh.shape[0], n = na + nb, i = 0, j = 0, m = 0, c
    cdef Py_ssize_t nc = len(a_columns)
    cdef int64_t w
    cdef bint same = True
    cdef const unsigned char[:, ::1] column
    cdef unsigned char[:, ::1] target
    cdef vector[const unsigned char*] src_a, src_b
    cdef vector[Py_ssize_t] width
    if len(b_columns) != nc:
        return None
    for c in range(nc):
        column = a_columns[c]
        width.push_back(column.shape[1])
        src_a.push_back(&column[0, 0] if column.shape[0] else NULL)
        column = b_columns[c]
        if column.shape[1] != width[c]:
            return None
        src_b.push_back(&column[0, 0] if column.shape[0] else NULL)
    take_a = np.empty(max(1, n), np.int64)
    w_a = np.empty(n, np.int64)
    cdef int64_t[::1] take = take_a
    cdef int64_t[::1] ow = w_a
    with nogil:
        while i < na and j < nb:
            if akh[i] < bkh[j] or (akh[i] == bkh[j] and arh[i] < brh[j]):
                take[m] = i
                ow[m] = aw[i]
                m += 1
                i += 1
            elif akh[i] != bkh[j] or arh[i] != brh[j]:
                take[m] = na + j
                ow[m] = bw[j]
                m += 1
                j += 1
            else:  # a row in both runs, once in each unless hashes collide within one
                if (i + 1 < na and akh[i + 1] == akh[i] and arh[i + 1] == arh[i]) or (
                    j + 1 < nb and bkh[j + 1] == bkh[j] and brh[j + 1] == brh[j]
                ):
                    same = False
                    break
                if not _same_row(src_a, i, src_b, j, width):
                    same = False
                    break
                w = aw[i] + bw[j]
                if w != 0:
                    take[m] = i
                    ow[m] = w
                    m += 1
                i += 1
                j += 1
        if same:
            while i < na:
                take[m] = i
                ow[m] = aw[i]
                m += 1
                i += 1
            while j < nb:
                take[m] = na + j
                ow[m] = bw[j]
                m += 1
                j += 1
    if not same:
        return None
    kh_a = np.empty(m, np.uint64)
    rh_a = kh_a if one_hash else np.empty(m, np.uint64)
    cdef uint64_t[::1] okh = kh_a
    cdef uint64_t[::1] orh = rh_a
    outs = []
    for c in range(nc):
        out = np.empty((m, width[c]), np.uint8)
        outs.append(out)
        if m:
            target = out
            with nogil:
                _gather_two(&target[0, 0], src_a[c], src_b[c], width[c], &take[0], m, na)
    if m:
        with nogil:
            _gather_two(<unsigned char*>&okh[0], <const unsigned char*>&akh[0] if na else NULL,
                        <const unsigned char*>&bkh[0] if nb else NULL, 8, &take[0], m, na)
            if not one_hash:
                _gather_two(<unsigned char*>&orh[0], <const unsigned char*>&arh[0] if na else NULL,
                            <const unsigned char*>&brh[0] if nb else NULL, 8, &take[0], m, na)
    # (weights of rows that cancelled leave a tail: copied away when over an eighth)
    return kh_a, rh_a, outs, (w_a[:m].copy() if 8 * (n - m) > n else w_a[:m])


def gather_matches(
    list runs, list run_fences, list run_columns, list run_weights,
    const uint64_t[::1] wanted, const int64_t[::1] order
):
    """Every pair of a probe row and a stored row whose key hashes are equal, with the
    stored row gathered: the body of a join's probe of a trace in one call. `wanted`:
    the probe rows' key hashes, ascending (repeats allowed), `order[q]` the probe row of
    `wanted[q]`. Each run: its key hashes `runs[i]`, fences `run_fences[i]`, columns
    `run_columns[i]` (each a C-contiguous (rows, width) uint8 array; the same widths in
    every run) and int64 weights `run_weights[i]`. Returns (probe rows, stored columns as
    (pairs, width) uint8 arrays, stored weights), run by run. Equal hashes are not yet
    equal keys: the caller checks the keys."""
    cdef Py_ssize_t m = wanted.shape[0], nr = len(runs), r, q, total = 0, t = 0, c, pos, nc, i, ahead
    cdef const uint64_t[::1] h
    cdef const uint64_t[::1] fe
    cdef const int64_t[::1] w
    cdef const unsigned char[:, ::1] column
    cdef unsigned char[:, ::1] into
    starts_a = np.zeros((nr, max(1, m)), np.int64)
    counts_a = np.zeros((nr, max(1, m)), np.int64)
    cdef int64_t[:, ::1] starts = starts_a
    cdef int64_t[:, ::1] counts = counts_a
    cdef int64_t[::1] blocks = np.empty(max(1, m), np.int64)
    for r in range(nr):
        h, fe = runs[r], run_fences[r]
        with nogil:
            total += _spans(h, fe, wanted, blocks, &starts[r, 0], &counts[r, 0])
    nc = len(run_columns[0]) if nr else 0
    probes_a = np.empty(total, np.int64)
    weights_a = np.empty(total, np.int64)
    cdef int64_t[::1] probes = probes_a
    cdef int64_t[::1] weights = weights_a
    cdef vector[Py_ssize_t] width
    cdef vector[unsigned char*] dst
    cdef vector[const unsigned char*] src
    out = []
    for c in range(nc):
        column = run_columns[0][c]
        width.push_back(column.shape[1])
        gathered = np.empty((total, column.shape[1]), np.uint8)
        out.append(gathered)
        into = gathered
        dst.push_back(&into[0, 0] if total else NULL)
    if total == 0:
        return probes_a, out, weights_a
    for r in range(nr):
        w = run_weights[r]
        src.clear()
        for column in run_columns[r]:
            src.push_back(&column[0, 0] if column.shape[0] else NULL)
        with nogil:
            for q in range(m):
                # the stored rows a few probes ahead are asked for now: each is a cold
                # line of every column of a large run, and the misses then overlap
                ahead = q + _AHEAD
                if ahead < m and counts[r, ahead]:
                    pos = starts[r, ahead]
                    dbspc_prefetch(&w[pos])
                    for c in range(nc):
                        dbspc_prefetch(src[c] + pos * width[c])
                pos = starts[r, q]
                for i in range(counts[r, q]):
                    probes[t] = order[q]
                    weights[t] = w[pos]
                    for c in range(nc):
                        _copy_value(dst[c] + t * width[c], src[c] + pos * width[c], width[c])
                    t += 1
                    pos += 1
    return probes_a, out, weights_a


def sum_groups(const int64_t[::1] order, const int64_t[::1] starts, list columns, const int64_t[::1] weights):
    """The groups of a batch sorted by row hash (`order`, `starts`: `sort_groups`), checked
    and summed in one pass, for rows of fixed-width columns (`columns`: C-contiguous
    (rows, width) uint8 arrays): each group's rows must hold the bytes of its first row.
    Returns (rows, sums): each group's first row and its summed weight, in group order,
    zero sums left out. None when a group holds different bytes (two rows that share a
    hash, or floats equal as values but not as bytes): the caller then groups exactly."""
    cdef Py_ssize_t n = order.shape[0], ng = starts.shape[0], nc = len(columns), g, j, c, end, kept = 0
    cdef vector[const unsigned char*] data
    cdef vector[Py_ssize_t] width
    cdef const unsigned char[:, ::1] column
    cdef bint same = True
    cdef int64_t total, first
    for column in columns:
        data.push_back(&column[0, 0] if column.shape[0] else NULL)
        width.push_back(column.shape[1])
    rows_a = np.empty(ng, np.int64)
    sums_a = np.empty(ng, np.int64)
    cdef int64_t[::1] rows = rows_a, sums = sums_a
    with nogil:
        for g in range(ng):
            first = order[starts[g]]
            total = weights[first]
            end = starts[g + 1] if g + 1 < ng else n
            for j in range(starts[g] + 1, end):
                for c in range(nc):
                    if memcmp(data[c] + order[j] * width[c], data[c] + first * width[c], width[c]) != 0:
                        same = False
                        break
                if not same:
                    break
                total += weights[order[j]]
            if not same:
                break
            if total != 0:
                rows[kept] = first
                sums[kept] = total
                kept += 1
    if not same:
        return None
    return rows_a[:kept], sums_a[:kept]

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""A linear aggregate's running sums per group (runtime/kernels/group_sums.py). The C++
is groupsums.h."""

import numpy as np

from libc.stdint cimport int8_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "groupsums.h" namespace "dbspc_groups":
    cdef cppclass GroupSums:
        void init(int w, int s)
        int64_t gather(
            const int64_t* keys, int64_t n, const int64_t* parts, int64_t* reps, int64_t* deltas, int8_t* present,
            int64_t* old
        ) nogil
        void add(const int64_t* keys, int64_t m, const int64_t* deltas, cbool mark) nogil
        void drain(vector[int64_t]& keys, vector[int64_t]& sums, vector[int64_t]& gone) nogil
        int64_t bytes()
        int64_t live
        int w, s
        uint64_t mask
        vector[uint64_t] touched

cdef extern from "iterscope.h" namespace "dbspc_iter":
    uint64_t collide


def set_collisions(uint64_t values):
    """Reduce every hash modulo `values` (0: hashes as they are); for tests."""
    global collide
    collide = values


cdef _rows(vector[int64_t]& v, int width):
    out = np.empty((v.size() // width if width else 0, width), dtype=np.int64)
    cdef int64_t[:, ::1] o = out
    if v.size():
        memcpy(&o[0, 0], v.data(), v.size() * sizeof(int64_t))
    return out


cdef class Table:
    """Per group (`width` int64 key words), `sums` int64 running sums, the first of them
    the group's row count."""

    cdef GroupSums g

    def __init__(self, int width, int sums):
        self.g.init(width, sums)

    def gather(self, const int64_t[:, ::1] keys, const int64_t[:, ::1] parts):
        """A change's rows (`keys`: their key words; `parts`: each row's sums to add)
        grouped: (reps, deltas, present, old), per group in the order first seen its
        first row, the sum of its rows' parts, whether it is held and its sums now
        (zeros when not). Reads only; the caller keeps the parts' sums inside int64."""
        cdef int64_t n = keys.shape[0], g = 0
        assert parts.shape[0] == n and parts.shape[1] == self.g.s and keys.shape[1] == self.g.w
        reps_a = np.empty(n, dtype=np.int64)
        deltas_a = np.empty((n, self.g.s), dtype=np.int64)
        present_a = np.empty(n, dtype=np.int8)
        old_a = np.empty((n, self.g.s), dtype=np.int64)
        cdef int64_t[::1] reps = reps_a
        cdef int64_t[:, ::1] deltas = deltas_a
        cdef int8_t[::1] present = present_a
        cdef int64_t[:, ::1] old = old_a
        if n:
            with nogil:
                g = self.g.gather(&keys[0, 0], n, &parts[0, 0], &reps[0], &deltas[0, 0], &present[0], &old[0, 0])
        return reps_a[:g], deltas_a[:g], present_a[:g].view(np.bool_), old_a[:g]

    def add(self, const int64_t[:, ::1] keys, const int64_t[:, ::1] deltas, cbool mark=True):
        """sums += deltas for each group of `keys` (distinct); a group whose count falls to
        zero is removed. `mark`: the trace has not seen this change (drain hands it over)."""
        cdef int64_t m = keys.shape[0]
        if m:
            with nogil:
                self.g.add(&keys[0, 0], m, &deltas[0, 0], mark)

    def drain(self):
        """(keys, sums, gone): the groups changed since the last drain that are held, with
        their sums, and the keys of those removed since (each once); clears the marks."""
        cdef vector[int64_t] keys, sums, gone
        with nogil:
            self.g.drain(keys, sums, gone)
        return _rows(keys, self.g.w), _rows(sums, self.g.s), _rows(gone, self.g.w)

    def __len__(self):
        return self.g.live

    def listed(self):
        """Slots listed for the next drain (a slot may be listed twice; for tests)."""
        return self.g.touched.size()

    def slots(self):
        return self.g.mask + 1

    def nbytes(self):
        return self.g.bytes()

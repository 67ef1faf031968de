# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""An incremental MIN/MAX's values, ordered per group (runtime/kernels/extrema_index.py).
The C++ is extrema.h."""

import numpy as np

from libc.stdint cimport int8_t, int64_t, uint64_t

cdef extern from "extrema.h" namespace "dbspc_iter":
    cdef cppclass Extrema:
        void init(int w)
        bint apply(const int64_t* keys, const int64_t* vals, const int64_t* wts, int64_t n) nogil
        void extremes(const int64_t* want, int64_t m, const int64_t* keys, const int64_t* vals, const int64_t* wts,
                      int64_t n, int8_t* has, int64_t* lo, int64_t* hi) nogil
        int64_t bytes()
        int64_t entries
    uint64_t collide


def set_collisions(uint64_t values):
    """Reduce every hash modulo `values` (0: hashes as they are); for tests."""
    global collide
    collide = values


cdef class Index:
    """Per group (`width` int64 key columns), its values in order with their counts."""

    cdef Extrema e

    def __init__(self, int width):
        self.e.init(width)

    def apply(self, const int64_t[:, ::1] keys, const int64_t[::1] values, const int64_t[::1] weights):
        """Add a change to the counts; False (the index is then unusable) when it deletes
        a value that is not there."""
        cdef int64_t n = values.shape[0]
        if n == 0:
            return True
        with nogil:
            ok = self.e.apply(&keys[0, 0], &values[0], &weights[0], n)
        return ok

    def extremes(self, const int64_t[:, ::1] want, const int64_t[:, ::1] keys, const int64_t[::1] values,
                 const int64_t[::1] weights):
        """(has, min, max) of each group of `want` once the change (keys, values, weights)
        is added, without adding it."""
        cdef int64_t m = want.shape[0], n = values.shape[0]
        has_a = np.zeros(m, dtype=np.int8)
        lo_a = np.zeros(m, dtype=np.int64)
        hi_a = np.zeros(m, dtype=np.int64)
        cdef int8_t[::1] has = has_a
        cdef int64_t[::1] lo = lo_a, hi = hi_a
        cdef const int64_t* k = &keys[0, 0] if n else NULL
        cdef const int64_t* v = &values[0] if n else NULL
        cdef const int64_t* w = &weights[0] if n else NULL
        if m:
            with nogil:
                self.e.extremes(&want[0, 0], m, k, v, w, n, &has[0], &lo[0], &hi[0])
        return has_a.view(np.bool_), lo_a, hi_a

    def __len__(self):
        """Values held (distinct per group)."""
        return self.e.entries

    def nbytes(self):
        return self.e.bytes()

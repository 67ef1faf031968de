# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Compiled row hashing over Arrow buffers (runtime/zset.py `hash_rows`).

A row's hash is built column by column: each kernel mixes one column's values into the
running uint64 hashes `h`, one call per column whatever the number of rows, reading the
column's Arrow buffers in place (validity bitmap, values, offsets; typed int8 as pyarrow exports them), so equal values hash
alike however the column is chunked or sliced. A NULL mixes a tag of its own, never the
undefined bytes of its slot. Hashes only order rows: equality is always checked apart.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from *:
    """
    #include <cstdint>
    #include <cstring>
    #include <cmath>
    static inline uint64_t dbspc_fmix(uint64_t k) {
        k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
        k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
        k ^= k >> 33; return k;
    }
    /* One value (its 64 bits, tag 1) or a NULL (tag 2) into a running hash. */
    static inline uint64_t dbspc_mix(uint64_t h, uint64_t x, uint64_t tag) {
        return dbspc_fmix((((h << 27) | (h >> 37)) * 0x9E3779B97F4A7C15ULL) ^ (x + tag * 0xD6E8FEB86659FD93ULL));
    }
    static inline uint64_t dbspc_bytes(const uint8_t* p, int64_t len) {
        uint64_t acc = 0x243F6A8885A308D3ULL ^ (uint64_t)len, w;
        int64_t i = 0;
        for (; i + 8 <= len; i += 8) { std::memcpy(&w, p + i, 8); acc = dbspc_fmix(acc ^ w) + 0x9E3779B97F4A7C15ULL; }
        if (i < len) { w = 0; std::memcpy(&w, p + i, (size_t)(len - i)); acc = dbspc_fmix(acc ^ w ^ 0xA5A5A5A5ULL); }
        return acc;
    }
    /* -0.0 as 0.0 and every NaN as one NaN, as equality (polars' group-by) sees them. */
    static inline uint64_t dbspc_float_bits(double v) {
        uint64_t b;
        if (v != v) return 0x7FF8000000000000ULL;
        if (v == 0.0) v = 0.0;
        std::memcpy(&b, &v, 8);
        return b;
    }
    """
    uint64_t dbspc_mix(uint64_t h, uint64_t x, uint64_t tag) nogil
    uint64_t dbspc_bytes(const uint8_t* p, int64_t length) nogil
    uint64_t dbspc_float_bits(double v) nogil


cdef inline bint _valid(const int8_t[::1] bits, Py_ssize_t i) noexcept nogil:
    return ((<uint8_t> bits[i >> 3]) >> (i & 7)) & 1


def mix_fixed(uint64_t[::1] h, const int8_t[::1] data, int width, bint signed, Py_ssize_t offset, validity):
    """Integers (and dates, timestamps) of `width` bytes (1, 2, 4, 8), or decimal128 slots
    (16), from element `offset` of `data`; widened to 64 bits first, so a value hashes
    the same in every integer width."""
    cdef Py_ssize_t n = h.shape[0], i, j
    cdef const int8_t[::1] bits
    cdef bint has_validity = validity is not None
    cdef uint64_t x
    cdef int64_t lo, hi
    cdef const uint8_t* p = <const uint8_t*> &data[0] if data.shape[0] else NULL
    if has_validity:
        bits = validity
    with nogil:
        for i in range(n):
            j = i + offset
            if has_validity and not _valid(bits, j):
                h[i] = dbspc_mix(h[i], 0, 2)
                continue
            if width == 8:
                memcpy(&x, p + 8 * j, 8)
            elif width == 4:
                x = <uint64_t> (<int64_t> (<const int32_t*> p)[j]) if signed else <uint64_t> (<const uint32_t*> p)[j]
            elif width == 2:
                x = <uint64_t> (<int64_t> (<const int16_t*> p)[j]) if signed else <uint64_t> (<const uint16_t*> p)[j]
            elif width == 1:
                x = <uint64_t> (<int64_t> (<const int8_t*> p)[j]) if signed else <uint64_t> p[j]
            else:  # decimal128: low word, then high word; below 2^63 the high word is the low word's sign
                memcpy(&lo, p + 16 * j, 8)
                memcpy(&hi, p + 16 * j + 8, 8)
                x = <uint64_t> lo
                if hi != (lo >> 63):
                    x ^= dbspc_mix(<uint64_t> hi, 0, 3)
            h[i] = dbspc_mix(h[i], x, 1)


def mix_float(uint64_t[::1] h, const int8_t[::1] data, int width, Py_ssize_t offset, validity):
    """float32 / float64 values (as doubles, -0.0 = 0.0, NaN = NaN)."""
    cdef Py_ssize_t n = h.shape[0], i, j
    cdef const int8_t[::1] bits
    cdef bint has_validity = validity is not None
    cdef double v
    cdef const uint8_t* p = <const uint8_t*> &data[0] if data.shape[0] else NULL
    if has_validity:
        bits = validity
    with nogil:
        for i in range(n):
            j = i + offset
            if has_validity and not _valid(bits, j):
                h[i] = dbspc_mix(h[i], 0, 2)
                continue
            v = (<const double*> p)[j] if width == 8 else <double> (<const float*> p)[j]
            h[i] = dbspc_mix(h[i], dbspc_float_bits(v), 1)


def mix_bool(uint64_t[::1] h, const int8_t[::1] data, Py_ssize_t offset, validity):
    """Booleans, bit-packed as Arrow holds them."""
    cdef Py_ssize_t n = h.shape[0], i, j
    cdef const int8_t[::1] bits
    cdef bint has_validity = validity is not None
    if has_validity:
        bits = validity
    with nogil:
        for i in range(n):
            j = i + offset
            if has_validity and not _valid(bits, j):
                h[i] = dbspc_mix(h[i], 0, 2)
            else:
                h[i] = dbspc_mix(h[i], _valid(data, j), 1)


def mix_binary(uint64_t[::1] h, const int8_t[::1] offsets, const int8_t[::1] data, bint wide, Py_ssize_t offset, validity):
    """Strings and binaries: Arrow offsets (int64 when `wide`, else int32) into `data`."""
    cdef Py_ssize_t n = h.shape[0], i, j
    cdef const int8_t[::1] bits
    cdef bint has_validity = validity is not None
    cdef int64_t start, end
    cdef const uint8_t* p = <const uint8_t*> &data[0] if data.shape[0] else NULL
    cdef const uint8_t* o = <const uint8_t*> &offsets[0]
    if has_validity:
        bits = validity
    with nogil:
        for i in range(n):
            j = i + offset
            if has_validity and not _valid(bits, j):
                h[i] = dbspc_mix(h[i], 0, 2)
                continue
            if wide:
                start = (<const int64_t*> o)[j]
                end = (<const int64_t*> o)[j + 1]
            else:
                start = (<const int32_t*> o)[j]
                end = (<const int32_t*> o)[j + 1]
            h[i] = dbspc_mix(h[i], dbspc_bytes(p + start, end - start), 1)


def mix_nulls(uint64_t[::1] h):
    """A column of NULLs only."""
    cdef Py_ssize_t n = h.shape[0], i
    with nogil:
        for i in range(n):
            h[i] = dbspc_mix(h[i], 0, 2)


def mix_hashes(uint64_t[::1] h, const uint64_t[::1] values):
    """Hashes of a column computed elsewhere (types the kernels do not read)."""
    cdef Py_ssize_t n = h.shape[0], i
    with nogil:
        for i in range(n):
            h[i] = dbspc_mix(h[i], values[i], 1)

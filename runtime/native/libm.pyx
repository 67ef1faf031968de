# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The C library's math functions over float64 arrays, one compiled loop per call
(runtime/math_functions.py).

numpy's own exp, log10, cbrt, sinh, power, atan2 and others take SIMD approximations on
CPUs with AVX-512 (SVML), which differ from the C library in the last bit on up to half of
all inputs: a view's DOUBLE results would then depend on the machine that computes them,
and a retraction computed on another machine could miss its row. These loops call the C
library on every CPU.
"""

import numpy as np

from libc cimport math as m

ctypedef double (*unary_t)(double) noexcept nogil
ctypedef double (*binary_t)(double, double) noexcept nogil

cdef unary_t[17] _UNARY = [
    m.cbrt, m.exp, m.expm1, m.log, m.log10, m.log1p, m.sin, m.cos, m.tan,
    m.asin, m.acos, m.atan, m.sinh, m.cosh, m.tanh, m.log2, m.sqrt,
]
UNARY = {name: i for i, name in enumerate(
    "cbrt exp expm1 log log10 log1p sin cos tan asin acos atan sinh cosh tanh log2 sqrt".split()
)}
cdef binary_t[3] _BINARY = [m.pow, m.atan2, m.hypot]
BINARY = {name: i for i, name in enumerate("pow atan2 hypot".split())}


def unary(str name, const double[::1] x):
    """fn(x) elementwise, fn one of UNARY's names, as a new float64 array."""
    cdef unary_t fn = _UNARY[UNARY[name]]
    cdef Py_ssize_t i, n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = fn(x[i])
    return out


def binary(str name, const double[::1] x, const double[::1] y):
    """fn(x, y) elementwise, fn one of BINARY's names, as a new float64 array."""
    cdef binary_t fn = _BINARY[BINARY[name]]
    cdef Py_ssize_t i, n = x.shape[0]
    if y.shape[0] != n:
        raise ValueError("arrays of different lengths")
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = fn(x[i], y[i])
    return out

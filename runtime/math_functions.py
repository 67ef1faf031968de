"""Vectorized kernels of the mathematical functions of compiler/frontend/bind_math.py.

The transcendental functions call the C library's on each element, in compiled loops
(runtime/native/libm.pyx): polars' own exp, pow, cbrt and log10, and numpy's on CPUs with
AVX-512, are faster approximations that differ from them in the last bit on up to half
of all inputs, so a result would depend on the machine. Spark computes with
Java's StrictMath (fdlibm) and the JIT's intrinsics; the C library's results are
correctly rounded in almost all cases, and differ from Spark's in the last bit on a
few inputs in a thousand (docs/sql-reference.md says so). Each value depends on its
own row only, never on the batch, so a retraction always meets the value its
insertion computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from dbspc.compiler.logical.scalar import Call
from dbspc.runtime.native import libm

Kernel = Callable[[list[pl.Expr], Call], pl.Expr]
Ufunc = Callable[..., np.ndarray]

# Java's Math.toDegrees and toRadians multiply by these (JDK 9 and later).
_RADIANS_TO_DEGREES = 57.29577951308232
_DEGREES_TO_RADIANS = 0.017453292519943295
_LN2 = math.log(2.0)


def numpy_call(fn: Ufunc, *args: pl.Expr) -> pl.Expr:
    """fn over the arguments' values as float64 arrays; NULL where any argument is NULL."""

    def apply(batch: pl.Series) -> pl.Series:
        arrays = [batch.struct.field(f"a{i}").to_numpy() for i in range(len(args))]
        with np.errstate(all="ignore"):
            return pl.Series(fn(*arrays), dtype=pl.Float64)

    fields = [a.cast(pl.Float64).alias(f"a{i}") for i, a in enumerate(args)]
    value = pl.struct(fields).map_batches(apply, return_dtype=pl.Float64)
    return pl.when(pl.any_horizontal([a.is_null() for a in args])).then(None).otherwise(value)


def ieee_divide(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """a / b in DOUBLE, correctly rounded as IEEE (and Java) divide, NULL where either is
    NULL. polars divides by a broadcast scalar as a product with its reciprocal, which is
    not always the same double: 7.0 / 3 would differ in the last bit between a one-row and
    a many-row batch, and a retraction would miss its row."""
    return numpy_call(np.divide, a, b)


def _c(name: str) -> Ufunc:
    """The C library's function `name` over float64 arrays."""
    if name in libm.BINARY:
        return lambda x, y: libm.binary(name, np.ascontiguousarray(x), np.ascontiguousarray(y))
    return lambda x: libm.unary(name, np.ascontiguousarray(x))


_LOG, _LOG1P, _SQRT = _c("log"), _c("log1p"), _c("sqrt")
_SIN, _COS, _TAN, _ATAN2 = _c("sin"), _c("cos"), _c("tan"), _c("atan2")


def _ufunc(fn: Ufunc) -> Kernel:
    return lambda args, call: numpy_call(fn, *args)


def _above(bound: float, fn: Ufunc) -> Kernel:
    """A logarithm: NULL at or below its asymptote `bound` (Spark), NaN stays NaN."""

    def kernel(args: list[pl.Expr], call: Call) -> pl.Expr:
        (x,) = args
        return pl.when(x <= bound).then(None).otherwise(numpy_call(fn, x))

    return kernel


def _log(args: list[pl.Expr], call: Call) -> pl.Expr:
    """LOG(base, x) = ln(x) / ln(base); NULL where either is at or below 0."""
    base, x = args
    value = numpy_call(lambda b, v: _LOG(v) / _LOG(b), base, x)
    return pl.when((base <= 0) | (x <= 0)).then(None).otherwise(value)


def _isnan(args: list[pl.Expr], call: Call) -> pl.Expr:
    return args[0].is_nan().fill_null(False)  # isnan(NULL) is false in Spark


def _nanvl(args: list[pl.Expr], call: Call) -> pl.Expr:
    a, b = args
    return pl.when(a.is_nan()).then(b).otherwise(a)


_FACTORIALS = [math.factorial(n) for n in range(21)]


def _factorial(args: list[pl.Expr], call: Call) -> pl.Expr:
    """n! for 0 <= n <= 20 (what fits a BIGINT), NULL elsewhere."""
    return args[0].replace_strict(list(range(21)), _FACTORIALS, default=None, return_dtype=pl.Int64)


def _shift(kind: str) -> Kernel:
    """Java's <<, >> or >>> of an INT or BIGINT: the distance's low 5 or 6 bits, the bits
    shifted out dropped (a left shift wraps), >> copying the sign bit in, >>> a zero."""

    def kernel(args: list[pl.Expr], call: Call) -> pl.Expr:
        x, by = args
        wide = call.type.kind == "BIGINT"
        signed, unsigned, bits = (np.int64, np.uint64, 64) if wide else (np.int32, np.uint32, 32)
        dtype = pl.Int64 if wide else pl.Int32

        def apply(batch: pl.Series) -> pl.Series:
            value = batch.struct.field("x").fill_null(0).to_numpy().astype(signed)
            distance = batch.struct.field("by").fill_null(0).to_numpy().astype(np.int64) & (bits - 1)
            if kind == "right":
                return pl.Series(value >> distance.astype(signed), dtype=dtype)
            raw = value.view(unsigned)
            moved = raw << distance.astype(unsigned) if kind == "left" else raw >> distance.astype(unsigned)
            return pl.Series(moved.view(signed), dtype=dtype)

        fields = [x.cast(dtype).alias("x"), by.cast(pl.Int32).alias("by")]
        value = pl.struct(fields).map_batches(apply, return_dtype=dtype)
        return pl.when(x.is_null() | by.is_null()).then(None).otherwise(value)

    return kernel


KERNELS: dict[str, Kernel] = {
    "shift_left": _shift("left"),
    "shift_right": _shift("right"),
    "shift_right_unsigned": _shift("unsigned"),
    "sqrt": lambda a, c: a[0].sqrt(),  # IEEE square root: exact everywhere
    "cbrt": _ufunc(_c("cbrt")),
    "exp": _ufunc(_c("exp")),
    "expm1": _ufunc(_c("expm1")),
    "ln": _above(0.0, _LOG),
    "log10": _above(0.0, _c("log10")),
    "log2": _above(0.0, lambda x: _LOG(x) / _LN2),  # Spark: ln(x) / ln(2)
    "log1p": _above(-1.0, _LOG1P),
    "log": _log,
    "power": _ufunc(_c("pow")),
    "sin": _ufunc(_SIN),
    "cos": _ufunc(_COS),
    "tan": _ufunc(_TAN),
    "asin": _ufunc(_c("asin")),
    "acos": _ufunc(_c("acos")),
    "atan": _ufunc(_c("atan")),
    "atan2": _ufunc(lambda y, x: _ATAN2(y + 0.0, x + 0.0)),  # Spark adds 0.0: -0.0 becomes 0.0
    "hypot": _ufunc(_c("hypot")),
    "sinh": _ufunc(_c("sinh")),
    "cosh": _ufunc(_c("cosh")),
    "tanh": _ufunc(_c("tanh")),
    # Spark's formulas, not the library's asinh/acosh/atanh
    "asinh": _ufunc(lambda x: np.where(x == -np.inf, x, _LOG(x + _SQRT(x * x + 1.0)))),
    "acosh": _ufunc(lambda x: _LOG(x + _SQRT(x * x - 1.0))),
    "atanh": _ufunc(lambda x: 0.5 * (_LOG1P(x) - _LOG1P(-x))),
    "cot": _ufunc(lambda x: 1.0 / _TAN(x)),
    "sec": _ufunc(lambda x: 1.0 / _COS(x)),
    "csc": _ufunc(lambda x: 1.0 / _SIN(x)),
    "degrees": lambda a, c: a[0] * _RADIANS_TO_DEGREES,
    "radians": lambda a, c: a[0] * _DEGREES_TO_RADIANS,
    "sign": lambda a, c: a[0].sign(),  # Java's signum: NaN stays NaN, -0.0 stays -0.0
    "rint": _ufunc(np.rint),
    "isnan": _isnan,
    "nanvl": _nanvl,
    "factorial": _factorial,
}

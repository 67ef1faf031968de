"""Vectorized kernels of the mathematical functions of compiler/frontend/bind_math.py.

The transcendental functions run in numpy, which calls the C library's functions on
each element: polars' own exp, pow, cbrt and log10 are faster approximations that
differ from them in the last bit on up to half of all inputs. Spark computes with
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
    value = numpy_call(lambda b, v: np.log(v) / np.log(b), base, x)
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


KERNELS: dict[str, Kernel] = {
    "sqrt": lambda a, c: a[0].sqrt(),  # IEEE square root: exact everywhere
    "cbrt": _ufunc(np.cbrt),
    "exp": _ufunc(np.exp),
    "expm1": _ufunc(np.expm1),
    "ln": _above(0.0, np.log),
    "log10": _above(0.0, np.log10),
    "log2": _above(0.0, lambda x: np.log(x) / _LN2),  # Spark: ln(x) / ln(2)
    "log1p": _above(-1.0, np.log1p),
    "log": _log,
    "power": _ufunc(np.power),
    "sin": _ufunc(np.sin),
    "cos": _ufunc(np.cos),
    "tan": _ufunc(np.tan),
    "asin": _ufunc(np.arcsin),
    "acos": _ufunc(np.arccos),
    "atan": _ufunc(np.arctan),
    "atan2": _ufunc(lambda y, x: np.arctan2(y + 0.0, x + 0.0)),  # Spark adds 0.0: -0.0 becomes 0.0
    "hypot": _ufunc(np.hypot),
    "sinh": _ufunc(np.sinh),
    "cosh": _ufunc(np.cosh),
    "tanh": _ufunc(np.tanh),
    # Spark's formulas, not the library's asinh/acosh/atanh
    "asinh": _ufunc(lambda x: np.where(x == -np.inf, x, np.log(x + np.sqrt(x * x + 1.0)))),
    "acosh": _ufunc(lambda x: np.log(x + np.sqrt(x * x - 1.0))),
    "atanh": _ufunc(lambda x: 0.5 * (np.log1p(x) - np.log1p(-x))),
    "cot": _ufunc(lambda x: 1.0 / np.tan(x)),
    "sec": _ufunc(lambda x: 1.0 / np.cos(x)),
    "csc": _ufunc(lambda x: 1.0 / np.sin(x)),
    "degrees": lambda a, c: a[0] * _RADIANS_TO_DEGREES,
    "radians": lambda a, c: a[0] * _DEGREES_TO_RADIANS,
    "sign": lambda a, c: a[0].sign(),  # Java's signum: NaN stays NaN, -0.0 stays -0.0
    "rint": _ufunc(np.rint),
    "isnan": _isnan,
    "nanvl": _nanvl,
    "factorial": _factorial,
}

"""Compile typed scalar expressions into vectorized polars expressions.

`compile_scalar` turns a `Scalar` (see compiler/logical/scalar.py for the function
catalogue) into one polars expression over a frame whose columns are `c0 .. c{n-1}`,
plus a list of *checks*: boolean expressions that are true on the rows where Spark 4
(ANSI mode) would raise a runtime error (division by zero, integer overflow, invalid
cast). Evaluation first runs all checks in one pass and raises `RuntimeSqlError` if
any fires; only then are the values computed. No SQL function runs Python per row.

Laziness: SQL evaluates CASE branches, COALESCE arguments and the right side of
AND/OR only when needed, so an error in an unevaluated part must not raise. Every
check is therefore ANDed with the *guard* under which its subexpression runs, e.g.
`CASE WHEN b <> 0 THEN a / b END` puts `b <> 0` in the guard of the division's
check, so it never fires. The value expressions themselves are computed on all rows
(polars is eager), so they are written never to fail: zero divisors become NULL,
out-of-range casts use `strict=False`.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, cast

import numpy as np
import polars as pl

from dbspc.compiler.errors import InternalCompilerError, RuntimeSqlError
from dbspc.compiler.frontend.bind_math import TRY_OPERATORS
from dbspc.compiler.logical.scalar import FUNCTIONS, Call, Col, Lit, Scalar
from dbspc.compiler.types import DECIMAL_CONTEXT, DOUBLE, TIMESTAMP_KINDS, SqlType, decimal
from dbspc.runtime import decimal_arithmetic, value_bounds
from dbspc.runtime.array_functions import KERNELS as ARRAY_KERNELS
from dbspc.runtime.datetime_functions import CALENDAR_FIELDS
from dbspc.runtime.datetime_functions import KERNELS as DATETIME_KERNELS
from dbspc.runtime.math_functions import KERNELS as MATH_KERNELS
from dbspc.runtime.math_functions import ieee_divide, numpy_call
from dbspc.runtime.spark_subexpressions import evaluated_ahead
from dbspc.runtime.string_functions import KERNELS as STRING_KERNELS
from dbspc.runtime.string_functions import MAX_STRING_BYTES
from dbspc.runtime.string_functions import TOO_LARGE as STRING_LIMITS
from dbspc.runtime.value_bounds import NONE_PROVEN
from dbspc.runtime.zset import WEIGHT, col_name, frame_of, polars_dtype

Guard = pl.Expr | None  # None: the subexpression is evaluated on every row

DIVISION_BY_ZERO = "division by zero"
INTEGER_OVERFLOW = "integer overflow"
DECIMAL_OVERFLOW = "numeric value out of range"

_I128 = pl.Int128()
_HALF_UP: Final = "half_away_from_zero"
# Decimal digits (precision) needed to hold each integer kind exactly.
_INT_DIGITS = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}


@dataclass(frozen=True, slots=True)
class Check:
    """A runtime error condition.

    `condition` is true (never NULL) on rows that must raise; `message` may contain
    `{value}`, replaced by the first offending row's `detail` value.
    """

    condition: pl.Expr
    message: str
    detail: pl.Expr | None = None


@dataclass(slots=True)
class CompiledScalar:
    """A compiled scalar: its value expression (already of the SQL type's dtype)."""

    expr: pl.Expr
    checks: list[Check] = field(default_factory=list)


def compile_scalar(
    expr: Scalar, proven: frozenset[Call] = NONE_PROVEN, eager: bool = False, ahead: frozenset[Call] = frozenset()
) -> CompiledScalar:
    """Compile `expr` once into a polars expression and its error checks; the `proven`
    calls (runtime/value_bounds.py) without theirs. `eager`: the dialect evaluates every
    operand of a call, even after a NULL one (Semantics.eager_operands); `ahead`: calls
    evaluated on every row whatever surrounds them (runtime/spark_subexpressions.py)."""
    compiler = _Compiler(proven, eager, ahead)
    value = compiler.compile(expr, None)
    return CompiledScalar(value.cast(polars_dtype(expr.type), strict=False), compiler.checks)


@dataclass(frozen=True, slots=True)
class _Program:
    exprs: tuple[pl.Expr, ...]
    checks: tuple[Check, ...]


@functools.lru_cache(maxsize=2048)
def _program(exprs: tuple[Scalar, ...], proven: frozenset[Call], eager: bool) -> _Program:
    """Compile a whole SELECT list; cached because kernels run it every step (a batch's
    proof is most often the same as the last one's)."""
    ahead = frozenset() if eager else evaluated_ahead(exprs)
    compiled = [compile_scalar(e, proven, eager, ahead) for e in exprs]
    checks = tuple(ch for c in compiled for ch in c.checks)
    return _Program(tuple(c.expr for c in compiled), checks)


def compile_scalars(
    exprs: Sequence[Scalar], proven: frozenset[Call] = NONE_PROVEN, eager: bool = False
) -> tuple[list[pl.Expr], list[Check]]:
    """The value expressions and all checks of a list of scalars (cached if hashable),
    without the checks of the `proven` calls."""
    try:
        prog = _program(tuple(exprs), proven, eager)
    except TypeError:  # an unhashable literal: compile without the cache
        prog = _program.__wrapped__(tuple(exprs), proven, eager)
    return list(prog.exprs), list(prog.checks)


def run_checks(frame: pl.DataFrame, checks: Sequence[Check], what: str) -> None:
    """Raise `RuntimeSqlError` if any check is true on any row of `frame`.

    All checks are computed in one lazy pass; conditions are broadcast over the
    frame first so that a constant condition does not fire on an empty batch.
    """
    if not checks or frame.height == 0:
        return
    names = [f"__check{i}" for i in range(len(checks))]
    if frame.height < EAGER_ROWS:  # (the frame is not empty, so a constant condition may fire)
        flagged = [ch.condition.any().alias(n) for ch, n in zip(checks, names, strict=True)]
        flags = _guarded(functools.partial(frame.select_seq, flagged), what)
    else:
        query = (
            frame.lazy()
            .with_columns([ch.condition.alias(n) for ch, n in zip(checks, names, strict=True)])
            .select([pl.col(n).any() for n in names])
        )
        flags = _collect(query, what)
    for flag, check in zip(flags.row(0), checks, strict=True):
        if flag:
            raise RuntimeSqlError(f"{_describe(frame, check, what)} in {what}")


def _describe(frame: pl.DataFrame, check: Check, what: str) -> str:
    """The check's message, with the first offending value filled in."""
    if check.detail is None or "{value}" not in check.message:
        return check.message
    bad = _collect(frame.lazy().filter(check.condition).select(check.detail.alias("v")).head(1), what)
    value = bad.item() if bad.height else None
    shown = f"'{value}'" if isinstance(value, str) else str(value)
    return check.message.replace("{value}", shown)


# Below this many rows a query runs eagerly: polars' query optimizer costs ~0.2 ms a
# call, more than the work on a small batch (1,000 rows: 0.32 ms against 0.50). Above it
# the optimizer's common subexpressions (a check repeats its operand's subtree) and its
# parallel evaluation win (1M rows: 6 ms lazy against 19 eager). The eager calls are the
# sequential ones (select_seq): handing a small batch's expressions to polars' thread
# pool costs more than evaluating them (20 rows, three expressions: 280 us against 140).
EAGER_ROWS = 8192


def _collect(query: pl.LazyFrame, what: str) -> pl.DataFrame:
    """Collect, turning polars' own decimal overflow errors into SQL errors."""
    return _guarded(query.collect, what)


def _guarded(run: Callable[[], pl.DataFrame], what: str) -> pl.DataFrame:
    """`run()`, turning polars' own decimal overflow errors into SQL errors."""
    try:
        return run()
    except pl.exceptions.ComputeError as exc:
        if "overflow" in str(exc):
            raise RuntimeSqlError(f"{DECIMAL_OVERFLOW} in {what}") from exc
        raise


# polars' calendar functions (chrono's) reach the years -262143..262142 and panic past them;
# Spark's (java.time's) reach further. Such a value fails the step as an error, not a crash.
_CALENDAR_RANGE = (
    "a date or timestamp outside the years -262143 to 262142, which dbspc's calendar functions do not reach"
)


_Evaluator = TypeVar("_Evaluator", bound=Callable[..., pl.DataFrame])


def _panics_as_errors(evaluator: _Evaluator) -> _Evaluator:
    """`evaluator`, raising a polars panic on a value out of its range as a RuntimeSqlError
    (the step is rejected and changes nothing, as for any SQL error)."""

    @functools.wraps(evaluator)
    def run(frame: pl.DataFrame, exprs: Any, what: str, eager: bool = False) -> pl.DataFrame:
        try:
            return evaluator(frame, exprs, what, eager)
        except pl.exceptions.PanicException as exc:
            message = str(exc)
            if "date" not in message and "time" not in message:
                raise InternalCompilerError(f"polars panicked evaluating {what}: {message}") from exc
            raise RuntimeSqlError(f"{_CALENDAR_RANGE} ({message}) in {what}") from exc

    return cast(_Evaluator, run)


@_panics_as_errors
def evaluate(frame: pl.DataFrame, exprs: Sequence[Scalar], what: str, eager: bool = False) -> pl.DataFrame:
    """Evaluate `exprs` over `frame` into columns c0..c{k-1} (plus `w` if present).

    Raises `RuntimeSqlError(f"{message} in {what}")` if any row hits a runtime error.
    `eager`: Semantics.eager_operands.
    """
    frame, exprs = _in_stages(frame, exprs, what, eager)
    values, checks = compile_scalars(exprs, value_bounds.proven(frame, exprs), eager)
    weight = [pl.col(WEIGHT)] if WEIGHT in frame.columns else []
    small = frame.height < EAGER_ROWS
    columns = [v.alias(col_name(i)) for i, v in enumerate(values)] + weight
    fused = _select_checked(frame, columns, checks) if small else None
    if fused is not None:
        return fused
    run_checks(frame, checks, what)
    if small:
        try:
            out = _guarded(functools.partial(frame.select_seq, columns), what)
            if out.height == frame.height:  # (constants alone, without the weight, give one row)
                return out
        except (pl.exceptions.ShapeError, pl.exceptions.InvalidOperationError):
            pass  # a constant computed by a Python function: only the optimized query broadcasts it
    # with_columns (not select) so that constant expressions broadcast to the
    # frame's height; all expressions see the input columns, not the new ones.
    query = (
        frame.lazy()
        .with_columns([v.alias(f"__out{i}") for i, v in enumerate(values)])
        .select([pl.col(f"__out{i}").alias(col_name(i)) for i in range(len(values))] + weight)
    )
    return _collect(query, what)


_ONE_ROW = pl.DataFrame({"__row": [0]})
_NOWHERE = "\x00"


def constant_error(expr: Scalar) -> str | None:
    """The SQL error a constant expression raises when evaluated, or None: what Spark's
    optimizer raises when it folds it (compiler/logical/constant_folding.py)."""
    return _alone(expr)[2]


def constant_value(expr: Scalar) -> tuple[bool, object]:
    """(True, the value) of a constant expression that evaluates without an error, else
    (False, None): what Spark's ConstantFolding puts in its place."""
    evaluated, value, _ = _alone(expr)
    return evaluated, value


def _alone(expr: Scalar) -> tuple[bool, object, str | None]:
    """(evaluated, its value, the SQL error it raises) of a constant expression evaluated
    on one row; what cannot be evaluated alone has neither, and is left to the rows."""
    try:
        return _alone_cached(expr)
    except TypeError:  # an unhashable literal: evaluated without the cache
        return _alone_cached.__wrapped__(expr)


@functools.lru_cache(maxsize=1024)
def _alone_cached(expr: Scalar) -> tuple[bool, object, str | None]:
    try:
        frame = evaluate(_ONE_ROW, [expr], _NOWHERE)
    except RuntimeSqlError as e:
        return False, None, str(e).removesuffix(f" in {_NOWHERE}")
    except Exception:
        return False, None, None
    try:
        return True, frame.item(0, 0), None
    except (Exception, pl.exceptions.PanicException):  # a value Python cannot hold (a far date): no error
        return False, None, None


def _select_checked(frame: pl.DataFrame, columns: list[pl.Expr], checks: Sequence[Check]) -> pl.DataFrame | None:
    """`columns` of a small non-empty frame, with the checks' flags computed in the same
    sequential select (one polars call instead of two). None, for the caller to run the
    checks first and raise the right error, when a check fires or anything fails, and
    when the columns do not have the frame's height (constants alone)."""
    if not checks or frame.height == 0:
        return None
    flags = [ch.condition.any().alias(f"__check{i}") for i, ch in enumerate(checks)]
    try:
        out = frame.select_seq([*columns, *flags])
    except Exception:  # a value's kernel failing where a check fires: the checks go first
        return None
    got = out.get_columns()
    if out.height != frame.height or any(flag[0] for flag in got[len(columns) :]):
        return None
    return frame_of(got[: len(columns)])


@_panics_as_errors
def evaluate_predicate(frame: pl.DataFrame, predicate: Scalar, what: str, eager: bool = False) -> pl.DataFrame:
    """The rows of `frame` where `predicate` is TRUE (NULL and FALSE drop)."""
    staged, (predicate,) = _in_stages(frame, [predicate], what, eager)
    values, checks = compile_scalars([predicate], value_bounds.proven(staged, [predicate]), eager)
    if staged.height < EAGER_ROWS:
        mask = _select_checked(staged, [values[0].alias("__keep")], checks)
        kept = None if mask is None else _filtered(staged, mask.to_series())
        if kept is not None:
            return kept if staged is frame else kept.select(frame.columns)
    run_checks(staged, checks, what)
    kept = _filter_eagerly(staged, values[0], what) if staged.height < EAGER_ROWS else None
    if kept is None:
        kept = _collect(staged.lazy().filter(values[0]), what)
    return kept if staged is frame else kept.select(frame.columns)


def _filter_eagerly(frame: pl.DataFrame, predicate: pl.Expr, what: str) -> pl.DataFrame | None:
    """frame.filter(predicate) for a small frame: the mask in one sequential select, then
    each column filtered in this thread (DataFrame.filter goes through polars' thread
    pool, ~130 us a call before any work). A constant predicate gives one value, which
    keeps every row or none. None (the caller runs the optimized query) for a mask of
    another length, which a constant computed by a Python function can give."""
    try:
        mask = _guarded(functools.partial(frame.select_seq, predicate.alias("__keep")), what).to_series()
    except (pl.exceptions.ShapeError, pl.exceptions.InvalidOperationError):
        return None
    return _filtered(frame, mask)


def _filtered(frame: pl.DataFrame, mask: pl.Series) -> pl.DataFrame | None:
    """The rows of `frame` where `mask` (one value per row, or one for all) is TRUE."""
    if mask.dtype != pl.Boolean:
        mask = mask.cast(pl.Boolean)
    if len(mask) == frame.height:
        return frame_of([column.filter(mask) for column in frame.get_columns()])
    if len(mask) == 1:
        return frame if mask[0] is True else frame.head(0)
    return None


# Deep expressions (generated SQL chains thousands of `+` terms) are evaluated in stages
# of at most this height: polars plans a single expression in time that grows faster
# than its depth, and each overflow check repeats its operand's subtree.
STAGE_HEIGHT = 8
# Functions that evaluate every argument under the caller's guard, so a subexpression
# below them may be computed ahead, on every row, without raising where SQL would not
# (CASE, COALESCE, AND/OR and friends guard their later arguments and are not here).
_EAGER = frozenset(
    """add sub mul neg div int_div mod abs eq ne lt le gt ge not is_null is_not_null
    cast concat upper lower length trim ltrim rtrim""".split()
)


def _in_stages(
    frame: pl.DataFrame, exprs: Sequence[Scalar], what: str, eager: bool
) -> tuple[pl.DataFrame, list[Scalar]]:
    """`frame` with the deep eager subexpressions of `exprs` computed into extra columns
    (in dependency order), and `exprs` reading those columns instead."""
    plan = _stage_plan(tuple(exprs), _data_width(frame), eager)
    if plan is None:
        return frame, list(exprs)
    stages, rewritten = plan
    base = _data_width(frame)
    for stage in stages:
        values, checks = compile_scalars(stage, value_bounds.proven(frame, stage), eager)
        run_checks(frame, checks, what)
        computed = [v.alias(col_name(base + i)) for i, v in enumerate(values)]
        frame = _guarded(functools.partial(frame.with_columns_seq, computed), what)
        base += len(stage)
    return frame, list(rewritten)


def _data_width(frame: pl.DataFrame) -> int:
    return frame.width - (1 if WEIGHT in frame.columns else 0)


@functools.lru_cache(maxsize=256)
def _stage_plan(
    exprs: tuple[Scalar, ...], width: int, eager: bool
) -> tuple[list[tuple[Scalar, ...]], tuple[Scalar, ...]] | None:
    """Which subexpressions to compute ahead, stage by stage; None when all are shallow.

    Without `eager` only a call's first-evaluated operand is searched (_evaluated_first),
    and the others only if they are deep themselves: they may be skipped on a row where it
    is NULL, so they are computed ahead (checked on every row) only where planning needs it."""
    heights: dict[int, int] = {}

    def height(e: Scalar) -> int:
        if not isinstance(e, Call):
            return 0
        if id(e) not in heights:
            heights[id(e)] = 1 + max((height(a) for a in e.args), default=0)
        return heights[id(e)]

    if all(height(e) <= STAGE_HEIGHT for e in exprs):
        return None
    lifted: list[tuple[Scalar, int]] = []  # (subexpression, stage)

    def lift(e: Scalar) -> tuple[Scalar, int, int]:
        """(e reading lifted columns, its height now, the latest stage it reads)."""
        if not isinstance(e, Call) or e.fn not in _EAGER:
            return e, height(e), -1
        first = None if eager else _evaluated_first(e)
        # a later operand may be skipped on a row (a NULL before it): it is computed ahead
        # only when too deep to plan otherwise, and then its checks hold on every row
        parts = [
            lift(a) if first is None or i == first or height(a) >= STAGE_HEIGHT else (a, height(a), -1)
            for i, a in enumerate(e.args)
        ]
        node = Call(e.type, e.fn, tuple(p[0] for p in parts))
        h = 1 + max(p[1] for p in parts)
        stage = max(p[2] for p in parts)
        if h < STAGE_HEIGHT:
            return node, h, stage
        lifted.append((node, stage + 1))
        return Col(e.type, -len(lifted)), 0, stage + 1  # renumbered below

    rewritten = [lift(e)[0] for e in exprs]
    by_stage: dict[int, list[int]] = {}
    for j, (_, stage) in enumerate(lifted):
        by_stage.setdefault(stage, []).append(j)
    index: dict[int, int] = {}  # lifted number -> column index
    order = [j for s in sorted(by_stage) for j in by_stage[s]]
    for position, j in enumerate(order):
        index[j] = width + position

    def renumber(e: Scalar) -> Scalar:
        if isinstance(e, Col) and e.index < 0:
            return Col(e.type, index[-e.index - 1])
        if isinstance(e, Call):
            return Call(e.type, e.fn, tuple(renumber(a) for a in e.args))
        return e

    stages = [tuple(renumber(lifted[j][0]) for j in by_stage[s]) for s in sorted(by_stage)]
    return stages, tuple(renumber(e) for e in rewritten)


# ---------------------------------------------------------------------------
# The compiler proper


Handler = Callable[["_Compiler", Call, Guard], pl.Expr]


class _Compiler:
    """Compiles one expression tree, collecting checks under their guards."""

    def __init__(
        self, proven: frozenset[Call] = NONE_PROVEN, eager: bool = False, ahead: frozenset[Call] = frozenset()
    ) -> None:
        self.checks: list[Check] = []
        self.proven = proven  # calls whose own checks cannot fire on this batch
        self.eager = eager  # Semantics.eager_operands
        self.ahead = ahead  # calls evaluated on every row (Spark's common subexpressions)

    def compile(self, expr: Scalar, guard: Guard) -> pl.Expr:
        if isinstance(expr, Col):
            return pl.col(col_name(expr.index))
        if isinstance(expr, Lit):
            return literal(expr)
        if isinstance(expr, Call):
            if self.ahead and expr in self.ahead:
                guard = None
            value = _HANDLERS[expr.fn](self, expr, guard)
            return value.cast(polars_dtype(expr.type), strict=False)
        raise InternalCompilerError(f"not a scalar: {expr!r}")

    def args(self, call: Call, guard: Guard, null_at_zero: bool = False) -> list[pl.Expr]:
        """Compile all arguments. Spark evaluates a NULL-intolerant operator's operands
        in turn and stops at a NULL, so an operand's checks hold only where the operands
        evaluated before it are not NULL: in `atan2(ln(f), f % f)`, `f % f` does not raise
        on a row where ln(f) is NULL (f = 0). `null_at_zero`: a division that is NULL for
        a zero divisor (TRY_DIVIDE) stops there too, before its dividend."""
        order = None if self.eager else _OPERAND_ORDER.get(call.fn)
        if order is None or len(call.args) < 2:
            return [self.compile(a, guard) for a in call.args]
        out: dict[int, pl.Expr] = {}
        for i in order(len(call.args)):
            out[i] = self.compile(call.args[i], guard)
            evaluated = out[i].is_not_null()
            if null_at_zero and i == len(call.args) - 1:
                evaluated = evaluated & (out[i] != 0).fill_null(False)
            guard = _and_guard(guard, evaluated)
        return [out[i] for i in range(len(call.args))]

    def check(self, condition: pl.Expr, message: str, guard: Guard, detail: pl.Expr | None = None) -> None:
        """Raise `message` on rows where `condition` is true and the guard holds."""
        cond = condition if guard is None else condition & guard
        self.checks.append(Check(cond.fill_null(False), message, detail))

    def fit(self, raw: pl.Expr, t: SqlType, guard: Guard, message: str, detail: pl.Expr | None = None) -> pl.Expr:
        """Cast `raw` to SQL type `t`, raising where the value does not fit.

        Decimals are first rounded half away from zero to the target scale, since
        polars' own rescaling rounds half to even.
        """
        if t.is_decimal and t.scale is not None:
            raw = raw.round(t.scale, mode=_HALF_UP)
        out = raw.cast(polars_dtype(t), strict=False)
        self.check(raw.is_not_null() & out.is_null(), message, guard, detail)
        return out


# The order in which Spark evaluates the operands of a call that is NULL when one of them
# is, stopping at the first NULL: BinaryExpression.eval and TernaryExpression.eval (and
# their generated code) go left to right, DivModLike.eval reads the divisor first, and
# StringLocate its start, then the substring, then the string (a NULL start stops it too,
# with the value 0). Not here (every operand evaluated, or an order of their own): concat,
# concat_ws, greatest, least, null_safe_eq, elt and the conditionals, which guard their
# operands themselves.
def _left_to_right(n: int) -> Sequence[int]:
    return range(n)


def _divisor_first(n: int) -> Sequence[int]:
    return range(n - 1, -1, -1)


def _start_first(n: int) -> Sequence[int]:
    return (n - 1, *range(n - 1))


_OPERAND_ORDER: dict[str, Callable[[int], Sequence[int]]] = {
    **dict.fromkeys(
        """add sub mul eq ne lt le gt ge like rlike bit_and bit_or bit_xor shift_left shift_right
        shift_right_unsigned power atan2 hypot log substring replace left right lpad rpad
        repeat regexp_extract regexp_replace substring_index split_part translate startswith endswith
        contains btrim ltrim_chars rtrim_chars split array_contains datediff date_add_days add_months
        add_months_overflow months_between zoned_months_between next_day date_format make_date
        make_date_invalid make_timestamp make_timestamp_invalid""".split(),
        _left_to_right,
    ),
    **dict.fromkeys("div div_or_null int_div int_div_or_null mod mod_or_null pmod".split(), _divisor_first),
    "locate": _start_first,
}


def _evaluated_first(call: Call) -> int | None:
    """The operand Spark evaluates first, or None if it evaluates all of them."""
    order = _OPERAND_ORDER.get(call.fn)
    return None if order is None else order(len(call.args))[0]


def _and_guard(guard: Guard, cond: pl.Expr) -> pl.Expr:
    """The guard of a subexpression evaluated only where `cond` (non-NULL) holds."""
    return cond if guard is None else guard & cond


def _any_null(args: Sequence[pl.Expr]) -> pl.Expr:
    return pl.any_horizontal([a.is_null() for a in args])


def _null_if_any_null(value: pl.Expr, args: Sequence[pl.Expr]) -> pl.Expr:
    """SQL's default NULL propagation, for kernels that would not propagate it."""
    return pl.when(_any_null(args)).then(None).otherwise(value)


def _i128(e: pl.Expr) -> pl.Expr:
    return e.cast(_I128, strict=False)


def _truncated_quotient(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """a / b truncated toward zero, for integers proven within ±2^52 (value_bounds), b
    never 0: in 64 bits, where nothing can overflow, instead of the 128-bit formula. Not
    through doubles: polars divides by a constant as a product with its reciprocal, so
    5782.0 / -98.0 gives -58.99999999999999."""
    a, b = a.cast(pl.Int64), b.cast(pl.Int64)
    return (a.abs() // b.abs()) * (a.sign() * b.sign())


def _i64(e: pl.Expr, t: SqlType) -> pl.Expr:
    """An integer operand in 64 bits, for an operator proven not to overflow."""
    return e if t.kind == "BIGINT" else e.cast(pl.Int64)


def _neg128(e: pl.Expr) -> pl.Expr:
    # polars has no unary minus for Int128
    return pl.lit(0, _I128) - e


def _digits(t: SqlType) -> tuple[int, int]:
    """(precision, scale) of an exact numeric type."""
    if t.is_decimal:
        return (t.precision or 38, t.scale or 0)
    return (_INT_DIGITS.get(t.kind, 38), 0)


# ---------------------------------------------------------------------------
# Literals


def literal(lit: Lit) -> pl.Expr:
    """A constant of exactly the literal's polars dtype."""
    t = lit.type
    dtype = polars_dtype(t)
    value = lit.value
    if value is None:
        return pl.lit(None, dtype=dtype)
    if t.is_decimal:
        dec = value if isinstance(value, _decimal.Decimal) else _decimal.Decimal(str(value))
        quantum = _decimal.Decimal(1).scaleb(-(t.scale or 0))
        value = dec.quantize(quantum, context=DECIMAL_CONTEXT)
    elif t.is_float:
        value = float(value)
    elif t.is_integer:
        value = int(value)
    elif t.kind == "DATE":
        if isinstance(value, str):
            value = _dt.date.fromisoformat(value)
        elif isinstance(value, _dt.datetime):
            value = value.date()
    elif t.kind in TIMESTAMP_KINDS:
        if isinstance(value, str):
            value = _dt.datetime.fromisoformat(value)
        elif not isinstance(value, _dt.datetime):
            value = _dt.datetime.combine(value, _dt.time())
    elif t.is_array:  # held as a tuple, so that the literal stays hashable
        return pl.lit(pl.Series([list(value)], dtype=dtype))
    return pl.lit(value, dtype=dtype)


# ---------------------------------------------------------------------------
# Arithmetic


# operator.add, sub or mul: applied to expressions and, for decimals, to series
_SeriesOp = Callable[[Any, Any], Any]


def _binary_arith(op: _SeriesOp) -> Handler:
    """add / sub / mul: integers computed in Int128 and range-checked (ANSI)."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        a, b = c.args(call, guard)
        t = call.type
        if t.is_integer:
            if call in c.proven:
                return op(_i64(a, call.args[0].type), _i64(b, call.args[1].type))
            return c.fit(op(_i128(a), _i128(b)), t, guard, INTEGER_OVERFLOW)
        if t.is_decimal:
            return _decimal_arith(c, op, a, b, call, guard)
        dtype = polars_dtype(t)
        return op(a.cast(dtype), b.cast(dtype))

    return handler


def _decimal_arith(c: _Compiler, op: _SeriesOp, a: pl.Expr, b: pl.Expr, call: Call, guard: Guard) -> pl.Expr:
    """A decimal sum, difference, product or quotient: the exact result of the operands'
    own values, rounded half up to the result's scale (Spark). polars computes sums and
    differences in 128 bits at the operands' scale, and a product when its left operand
    fits 38 digits at the product's scale; wider products and every quotient run in
    runtime/decimal_arithmetic.py. A batch whose 128-bit intermediate overflows (a
    scale-18 sum past 10^20) is computed again in Python's decimal, so only such a batch
    pays per row. `op` is operator.add, sub, mul or truediv."""
    ta, tb, t = call.args[0].type, call.args[1].type, call.type
    if _fits_128_bits(op, ta, tb):  # the common case: one polars expression, no Python call
        if op is operator.mul:
            a = a.cast(pl.Decimal(38, _digits(ta)[1] + _digits(tb)[1]))
        return c.fit(op(a, b), t, guard, DECIMAL_OVERFLOW)
    scale = t.scale or 0
    result = polars_dtype(t)
    fields = {"value": result, "overflow": pl.Boolean()}

    def compute(batch: pl.Series) -> pl.Series:
        x, y = batch.struct.field("a"), batch.struct.field("b")
        if op is operator.truediv:
            value, overflow = decimal_arithmetic.polars_quotient(x, y, ta, tb, t)
        elif op is operator.mul and _digits(ta)[0] + _digits(tb)[1] > 38:
            value, overflow = decimal_arithmetic.product(x, y, ta, tb, t)
        else:
            try:
                if op is operator.mul:  # exact at scale s1 + s2; rounded once below
                    x = x.cast(pl.Decimal(38, _digits(ta)[1] + _digits(tb)[1]))
                raw = op(x, y).round(scale, mode=_HALF_UP)
                value = raw.cast(result, strict=False)
                overflow = raw.is_not_null() & value.is_null()
            except pl.exceptions.PolarsError:
                value, overflow = decimal_arithmetic.row_by_row(x, y, t, decimal_arithmetic.EXACT[op])
        return pl.struct(value.alias("value"), overflow.alias("overflow"), eager=True)

    both = pl.struct(a.alias("a"), b.alias("b")).map_batches(_once_per_batch(compute), return_dtype=pl.Struct(fields))
    c.check(both.struct.field("overflow"), DECIMAL_OVERFLOW, guard)
    return both.struct.field("value")


# Batches of at most this many rows are remembered by a Python batch call (_once_per_batch)
_MEMO_ROWS = 65536


def _fits_128_bits(op: _SeriesOp, ta: SqlType, tb: SqlType) -> bool:
    """Whether the exact sum, difference or product of any values of these types has at
    most 38 digits (a product at scale s1 + s2), so that polars computes it exactly."""
    (p1, s1), (p2, s2) = _digits(ta), _digits(tb)
    if op is operator.mul:
        return p1 + p2 <= 38
    if op in (operator.add, operator.sub):
        return max(p1 - s1, p2 - s2) + 1 + max(s1, s2) <= 38
    return False


def _neg(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    (a,) = c.args(call, guard)
    if call.type.is_integer:
        if call in c.proven:
            return -_i64(a, call.args[0].type)
        return c.fit(_neg128(_i128(a)), call.type, guard, INTEGER_OVERFLOW)
    if call.type.is_decimal and (call.type.precision or 38) > _NEGATION_DIGITS:
        return -_negation_rounded(c, a, call.type, guard, a)
    return -a.cast(polars_dtype(call.type))


def _bitwise(op: _SeriesOp | None) -> Handler:
    """&, |, ^ (and ~ for None) of integers already of the result type: polars' own, on
    two's complement values as Java's, so they cannot overflow."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        args = [a.cast(polars_dtype(call.type), strict=False) for a in c.args(call, guard)]
        return args[0].not_() if op is None else op(args[0], args[1])

    return handler


def _abs(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    (a,) = c.args(call, guard)
    if call.type.is_integer:
        if call in c.proven:
            return _i64(a, call.args[0].type).abs()
        return c.fit(_i128(a).abs(), call.type, guard, INTEGER_OVERFLOW)
    if call.type.is_decimal and (call.type.precision or 38) > _NEGATION_DIGITS:
        # Spark's abs negates a negative value, with the rounding below
        return _negation_rounded(c, a, call.type, guard, pl.when(a < 0).then(a)).abs().fill_null(a.abs())
    return a.cast(polars_dtype(call.type)).abs()


# Spark negates a decimal of more than 18 digits through Scala's BigDecimal, whose
# MathContext (DECIMAL128) keeps 34 significant digits, rounding half to even:
# -CAST('0.1234567890123456789012345678901234567' AS DECIMAL(38,37)) is
# -0.1234567890123456789012345678901235000 (Spark 4.3, checked).
_NEGATION_DIGITS = 34


def _negation_rounded(c: _Compiler, a: pl.Expr, t: SqlType, guard: Guard, where: pl.Expr) -> pl.Expr:
    """`where` (a's values, NULL where not negated) rounded half to even to 34 significant
    digits, as Spark's negation does; values of at most 34 digits are unchanged. A
    rounding past t's precision (…999 up to 10^p) raises, as Spark's does."""
    precision, scale = _digits(t)
    unscaled = where.cast(pl.Decimal(38, scale)).to_physical()
    size = unscaled.abs()
    rounded = unscaled
    for drop in (1, 2, 3, 4):  # 35 to 38 digits: drop 1 to 4 of them
        wide = size >= pl.lit(10 ** (33 + drop), _I128)
        rounded = pl.when(wide).then(_round_int128(unscaled, drop, even=True)).otherwise(rounded)
    fits = rounded.abs() < pl.lit(10**precision, _I128)
    c.check(~fits, DECIMAL_OVERFLOW, guard)
    return decimal_arithmetic.unscaled_to_decimal(pl.when(fits).then(rounded), t)


def _division(kind: str, raising: bool) -> Handler:
    """div / int_div / mod and their *_or_null forms.

    The divisor is replaced by NULL where it is 0, so the value expression never
    divides by zero; the raising forms add a check (a NULL dividend never raises).
    """

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        a, b = c.args(call, guard, null_at_zero=not raising)
        relieved = call in c.proven  # b is never 0, and an integer quotient fits
        if raising and not relieved:
            c.check(a.is_not_null() & (b == 0), DIVISION_BY_ZERO, guard)
        safe_b = b if relieved else pl.when(b != 0).then(b)
        ta, tb = call.args[0].type, call.args[1].type
        if kind == "div":
            if call.type.is_decimal:
                m = _exact_quotient_scale(ta, tb, call.type)
                if m is not None:  # the common small types: one polars expression
                    return c.fit(a.cast(pl.Decimal(38, m)) / safe_b, call.type, guard, DECIMAL_OVERFLOW)
                return _decimal_arith(c, operator.truediv, a, safe_b, call, guard)
            return ieee_divide(a, safe_b)
        if kind == "int_div":
            return _int_div(c, a, safe_b, ta, tb, call.type, guard, fits=relieved)
        return _mod(c, a, safe_b, ta, tb, call.type, guard, small=relieved)

    return handler


def _exact_quotient_scale(ta: SqlType, tb: SqlType, t: SqlType) -> int | None:
    """A dividend scale m at which polars' quotient, rounded half up to t's scale s, is
    the exact quotient's rounding, for any values of these types; None if there is none.

    In units of 10^-(s+1) the exact quotient is a fraction whose denominator divides
    D = 10^p2 (and 10^(s1-s-1-s2) more when the dividend's scale is the finer one), so
    unless it is exactly a tie it lies at least 1/D from one. polars' quotient at scale m
    is within one unit of its last place, 10^(s+1-m) of those units: with
    10^(m-s-1) >= D it cannot cross or land on a tie the exact one is not on. And when
    every scaled dividend (and times 10^s2) fits 38 digits, polars cannot overflow on
    the way."""
    (p1, s1), (p2, s2), s = _digits(ta), _digits(tb), t.scale or 0
    m = max(s1, s + 1 + p2 + max(0, s1 - s - 1 - s2))
    return m if (p1 - s1) + m + s2 <= 38 else None


def _ieee_div(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """DOUBLE division with IEEE results for a zero divisor (DuckDB: 1 / 0 is Infinity)."""
    a, b = c.args(call, guard)
    return ieee_divide(a, b)


def _int_div(
    c: _Compiler,
    a: pl.Expr,
    b: pl.Expr,
    ta: SqlType,
    tb: SqlType,
    t: SqlType,
    guard: Guard,
    fits: bool = False,
) -> pl.Expr:
    """Division truncated toward zero (Spark `div`, SQLite integer `/`); `fits`: an
    integer quotient is proven to fit t (and integer operands to lie within ±2^52)."""
    if fits and ta.is_integer and tb.is_integer:
        return _truncated_quotient(a, b)
    if ta.is_integer and tb.is_integer:
        a128, b128 = _i128(a), _i128(b)
        q = a128.abs() // b128.abs()
        q = pl.when((a128 < 0) != (b128 < 0)).then(_neg128(q)).otherwise(q)
    elif ta.is_float or tb.is_float:
        q = (a.cast(pl.Float64) / b.cast(pl.Float64)).cast(_I128, strict=False)
    else:
        # Decimal: the quotient rounded at the operand scale may have crossed an
        # integer boundary; step back toward zero where |q * b| exceeds |a|.
        q = (a / b).cast(_I128, strict=False)
        overshoot = (q.cast(pl.Decimal(38, 0)) * b).abs() > a.abs()
        step = pl.when((a < 0) != (b < 0)).then(pl.lit(-1, _I128)).otherwise(pl.lit(1, _I128))
        q = pl.when(overshoot).then(q - step).otherwise(q)
    if t.is_integer and not fits:
        return c.fit(q, t, guard, INTEGER_OVERFLOW)
    return q.cast(polars_dtype(t), strict=False)


def _mod(
    c: _Compiler,
    a: pl.Expr,
    b: pl.Expr,
    ta: SqlType,
    tb: SqlType,
    t: SqlType,
    guard: Guard,
    small: bool = False,
) -> pl.Expr:
    """Remainder with the dividend's sign (truncated division, as Spark and C); `small`:
    integer operands are proven to lie within ±2^52, and b never to be 0."""
    if small and ta.is_integer and tb.is_integer:
        return a.cast(pl.Int64) - b.cast(pl.Int64) * _truncated_quotient(a, b)
    if ta.is_integer and tb.is_integer:
        a128 = _i128(a)
        r = a128.abs() % _i128(b).abs()
        return pl.when(a128 < 0).then(_neg128(r)).otherwise(r)
    if not (ta.is_decimal or tb.is_decimal):
        # DOUBLE: C's fmod (Java's %), exact; polars' float % rounds (1e17 % 3 would be 0)
        return numpy_call(np.fmod, a, b)
    # On non-negative operands polars' floored modulo equals the truncated one.
    r = a.abs() % b.abs()
    value = pl.when(a < 0).then(-r).otherwise(r)
    if t.is_decimal:
        return c.fit(value, t, guard, DECIMAL_OVERFLOW)
    return value


_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _pmod(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """Spark's pmod(a, n): r = a % n, and where r < 0, (r + n) % n, computed in the
    operands' type as Java does, so an integer r + n wraps around (pmod(-5,
    -2147483648) is 2147483643); a zero divisor raises like `%`."""
    a, n = c.args(call, guard)
    c.check(a.is_not_null() & (n == 0), DIVISION_BY_ZERO, guard)
    safe_n = pl.when(n != 0).then(n)
    ta, tn, t = call.args[0].type, call.args[1].type, call.type  # integer operands have type t
    r = _mod(c, a, safe_n, ta, tn, t, guard)
    if t.is_integer:  # in 128 bits, then wrapped to the type's as Java's int arithmetic
        bits = _INT_BITS[t.kind]
        wide = _i128(r) + _i128(safe_n)
        shifted = pl.when(wide < -(2 ** (bits - 1))).then(wide + 2**bits).otherwise(wide)
    else:
        shifted = r + safe_n
    negative = (r < 0).fill_null(False)
    value = pl.when(negative).then(_mod(c, shifted, safe_n, ta, tn, t, _and_guard(guard, negative))).otherwise(r)
    return c.fit(value, call.type, guard, DECIMAL_OVERFLOW) if call.type.is_decimal else value


_DIVISIONS = frozenset(("div", "int_div", "mod"))


class _Trying(_Compiler):
    """Compiles one TRY_ operator: the errors of its arguments still raise (they are
    compiled by the enclosing compiler); the operator's own become NULL."""

    def __init__(self, outer: _Compiler) -> None:
        super().__init__(outer.proven, outer.eager, outer.ahead)
        self.outer = outer

    def args(self, call: Call, guard: Guard, null_at_zero: bool = False) -> list[pl.Expr]:
        # Spark's TRY mode of a division is NULL for a zero divisor without reading the dividend
        return self.outer.args(call, guard, null_at_zero or call.fn in _DIVISIONS)


def _try(fn: str) -> Handler:
    """try_add, try_div, ...: `fn`'s value, NULL on the rows where `fn` would raise."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        trying = _Trying(c)
        value = _HANDLERS[fn](trying, Call(call.type, fn, call.args), guard)
        if not trying.checks:
            return value
        failed = pl.any_horizontal([check.condition for check in trying.checks])
        return pl.when(failed).then(None).otherwise(value)

    return handler


# ---------------------------------------------------------------------------
# Comparison and logic


def _comparison(op: Callable[[pl.Expr, pl.Expr], pl.Expr]) -> Handler:
    """eq .. ge: NULL if either side is NULL (polars orders NaN last, as Spark)."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        a, b = c.args(call, guard)
        return op(a, b)

    return handler


def _null_safe_eq(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    a, b = c.args(call, guard)
    return a.eq_missing(b)


def _and(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """Kleene AND; an argument is evaluated only if no earlier one is FALSE."""
    parts: list[pl.Expr] = []
    for arg in call.args:
        g = guard
        for prev in parts:
            g = _and_guard(g, prev.fill_null(True))
        parts.append(c.compile(arg, g).cast(pl.Boolean))
    return functools.reduce(operator.and_, parts)


def _or(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """Kleene OR; an argument is evaluated only if no earlier one is TRUE."""
    parts: list[pl.Expr] = []
    for arg in call.args:
        g = guard
        for prev in parts:
            g = _and_guard(g, ~prev.fill_null(False))
        parts.append(c.compile(arg, g).cast(pl.Boolean))
    return functools.reduce(operator.or_, parts)


def _not(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    (a,) = c.args(call, guard)
    return ~a.cast(pl.Boolean)


def _unary(fn: Callable[[pl.Expr], pl.Expr]) -> Handler:
    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        (a,) = c.args(call, guard)
        return fn(a)

    return handler


# ---------------------------------------------------------------------------
# Conditionals


def _case(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """CASE WHEN c1 THEN v1 ... ELSE e END; a branch runs only where it is chosen."""
    args = call.args
    pairs = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
    else_arg = args[-1] if len(args) % 2 == 1 else None
    dtype = polars_dtype(call.type)
    taken: pl.Expr | None = None  # some earlier condition was TRUE
    chain: pl.Expr | None = None
    for cond_arg, val_arg in pairs:
        cond_guard = guard if taken is None else _and_guard(guard, ~taken)
        cond = c.compile(cond_arg, cond_guard).cast(pl.Boolean).fill_null(False)
        val = c.compile(val_arg, _and_guard(cond_guard, cond)).cast(dtype, strict=False)
        chain = (
            pl.when(cond).then(val) if chain is None else chain.when(cond).then(val)  # type: ignore[attr-defined]
        )
        taken = cond if taken is None else taken | cond
    if else_arg is None:
        otherwise = pl.lit(None, dtype=dtype)
    else:
        else_guard = guard if taken is None else _and_guard(guard, ~taken)
        otherwise = c.compile(else_arg, else_guard).cast(dtype, strict=False)
    if chain is None:
        return otherwise
    return chain.otherwise(otherwise)  # type: ignore[attr-defined]


def _coalesce(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """First non-NULL argument; later arguments run only where earlier were NULL."""
    dtype = polars_dtype(call.type)
    parts: list[pl.Expr] = []
    for arg in call.args:
        g = guard
        for prev in parts:
            g = _and_guard(g, prev.is_null())
        parts.append(c.compile(arg, g).cast(dtype, strict=False))
    return pl.coalesce(parts)


def _error_if(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """error_if(condition, value, message[, shown]): `value`, or the error `message` where
    the condition holds; `shown` fills the message's {value}."""
    message = call.args[2]
    if not isinstance(message, Lit):
        raise InternalCompilerError("error_if needs a literal message")
    shown = c.compile(call.args[3], guard) if len(call.args) > 3 else None
    c.check(c.compile(call.args[0], guard), str(message.value), guard, shown)
    return c.compile(call.args[1], guard)


def _store_char(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """A string written to a VARCHAR(n) (or CHAR(n), padded with spaces to n), as Spark
    writes it: characters beyond n may only be spaces, and are dropped."""
    x = c.compile(call.args[0], guard)
    n, fixed = _constant_int(call.args[1]), call.args[2]
    assert n is not None and isinstance(fixed, Lit)
    beyond = x.str.slice(n)
    c.check(
        beyond.str.strip_chars_end(" ").str.len_chars() > 0,
        f"EXCEED_LIMIT_LENGTH: {{value}} exceeds the char/varchar length limit {n}",
        guard,
        x,
    )
    kept = x.str.slice(0, n)
    return kept.str.pad_end(n, " ") if fixed.value else kept


def _nullif(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    a, b = c.args(call, guard)
    return pl.when(a == b).then(pl.lit(None, dtype=polars_dtype(call.type))).otherwise(a)


# ---------------------------------------------------------------------------
# Casts


def _cast_handler(strict: bool) -> Handler:
    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        (a,) = c.args(call, guard)
        if call in c.proven:  # an integer narrowed, every value proven to fit
            return a.cast(polars_dtype(call.type), strict=False)
        return cast_expr(c, a, call.args[0].type, call.type, guard, strict)

    return handler


def cast_expr(c: _Compiler, x: pl.Expr, src: SqlType, dst: SqlType, guard: Guard, strict: bool) -> pl.Expr:
    """CAST(x AS dst) from `src`; with `strict` (CAST, not TRY_CAST) bad input raises."""
    dtype = polars_dtype(dst)
    if src == dst:
        return x
    if src.kind == "NULL" or dst.kind == "NULL":
        return x.cast(dtype, strict=False)
    if dst.kind == "STRING":
        return _to_string(x, src)
    if src.kind == "STRING":
        out = _from_string(x, dst)
        if strict:
            message = f"invalid cast of {{value}} from STRING to {dst}"
            c.check(x.is_not_null() & out.is_null(), message, guard, x)
        return out
    if dst.kind == "BOOLEAN" and (src.is_numeric or src.kind == "BOOLEAN"):
        return x != 0
    if dst.is_numeric and (src.is_numeric or src.kind in ("BOOLEAN", "TIMESTAMP")):
        raw = _numeric_cast_source(x, src, dst)
        out = raw.cast(dtype, strict=False)
        if strict and not _widening(src, dst):
            message = (
                f"{INTEGER_OVERFLOW if dst.is_integer else DECIMAL_OVERFLOW}: "
                f"{{value}} of type {src} cannot be cast to {dst}"
            )
            bad = x.is_not_null() & out.is_null()
            if src.is_float and dst.is_decimal:  # Spark: NaN and ±Infinity are a NULL DECIMAL, never an error
                bad = bad & x.is_finite()
            c.check(bad, message, guard, x)
        return out
    if dst.kind == "DATE" and src.kind in TIMESTAMP_KINDS:
        return x.dt.date()
    if dst.kind in TIMESTAMP_KINDS and src.kind == "DATE":
        return x.cast(dtype)
    if dst.kind in TIMESTAMP_KINDS and src.kind in TIMESTAMP_KINDS:
        return x  # the same wall clock: the session zone's conversion is explicit in the plan
    raise InternalCompilerError(f"no cast from {src} to {dst}")



def _widening(src: SqlType, dst: SqlType) -> bool:
    """True if every value of `src` fits `dst`, so the cast needs no check."""
    if src.kind == "BOOLEAN" or (dst.is_float and (src.is_integer or src.is_decimal)):
        return True
    if not (src.is_integer or src.is_decimal) or not (dst.is_integer or dst.is_decimal):
        return False
    if dst.is_integer:
        return src.is_integer and _INT_DIGITS[src.kind] < _INT_DIGITS[dst.kind]
    sp, ss = _digits(src)
    dp, ds = _digits(dst)
    return dp - ds >= sp - ss  # a decimal target keeps all integer digits


def _numeric_cast_source(x: pl.Expr, src: SqlType, dst: SqlType) -> pl.Expr:
    """The value to cast to a numeric type, pre-rounded the way Spark rounds."""
    if src.kind == "BOOLEAN":
        return x.cast(pl.Int8)
    if src.kind == "TIMESTAMP":  # seconds since the epoch, as Spark
        micros = x.dt.epoch("us")
        if dst.is_integer:
            return micros // 1_000_000  # rounded down: -1.5 s is -2
        seconds = micros / 1_000_000  # Spark goes through this double to FLOAT and DECIMAL too
        return _numeric_cast_source(seconds, DOUBLE, dst) if dst.is_decimal else seconds
    if dst.is_integer and src.is_decimal:
        return x.cast(_I128, strict=False)  # truncates toward zero
    if dst.is_decimal and src.is_float:
        # Spark converts a double through its shortest decimal string (Scala's
        # BigDecimal(d)), so 2.675 is 2.675, not the binary 2.67499…, and rounds HALF_UP
        precision, scale = _digits(dst)
        convert = functools.partial(_decimal_of_double, precision=precision, scale=scale)
        # a FLOAT as its double
        return x.cast(pl.Float64).map_batches(_once_per_batch(convert), return_dtype=pl.Decimal(38, scale))
    if dst.is_decimal and src.is_decimal:
        return x.round(dst.scale or 0, mode=_HALF_UP)  # Spark rounds HALF_UP
    return x  # float -> int: polars truncates toward zero, NaN/inf/too big -> NULL


_DECIMAL_TEXT = r"^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$"
_POWERS_OF_TEN = pl.Series([10**k for k in range(39)], dtype=_I128)


def _decimal_of_text(texts: pl.Series, precision: int, scale: int) -> pl.Series:
    """Decimal strings (plain or scientific, trimmed) as DECIMAL(38, scale) values rounded
    HALF_UP as Spark's BigDecimal does; NULL where unparsable or out of
    DECIMAL(precision, scale)'s range.

    The digits are read as one integer D with the power of ten of its last digit, so the
    rounding is exact: U = D * 10^(exp + scale), or D / 10^k rounded half up. (polars'
    parse rounds half to even at the type's scale: '2.5' as DECIMAL(38,0) was 2, and
    '7.4995' read one digit finer, 7.5, then 8; Spark gives 3 and 7.) Of more than 38
    significant digits the first 38 are kept (a truncation, which keeps every half-up
    decision at a coarser place) and the next one rounds at the 38th's place. Each step
    is one column of a frame, computed once."""
    frame = (
        pl.DataFrame({"s": texts})
        .with_columns(pl.col("s").str.extract_groups(_DECIMAL_TEXT).alias("g"))
        .unnest("g")
        .rename({"1": "sign", "2": "whole", "3": "fraction", "4": "exponent"})
        .with_columns(pl.col("fraction").fill_null(""))
    )
    whole, fraction = pl.col("whole"), pl.col("fraction")
    frame = frame.with_columns(
        digits=(whole + fraction).str.strip_chars_start("0"),
        any_digit=whole.str.len_chars() + fraction.str.len_chars() > 0,
        # U = D * 10^shift at the target scale
        shift=pl.col("exponent").cast(pl.Int64, strict=False).fill_null(0)
        - fraction.str.len_chars().cast(pl.Int64)
        + scale,
    )
    digits = pl.col("digits")
    dropped = (digits.str.len_chars().cast(pl.Int64) - 38).clip(lower_bound=0)
    frame = frame.with_columns(
        count=digits.str.len_chars().cast(pl.Int64).clip(upper_bound=38),
        d=pl.when(digits == "").then(pl.lit(0, _I128)).otherwise(digits.str.slice(0, 38).cast(_I128, strict=False)),
        carry=(digits.str.slice(38, 1) >= "5").fill_null(False),
        shift=pl.col("shift") + dropped,
    )
    d, count, shift = pl.col("d"), pl.col("count"), pl.col("shift")
    frame = frame.with_columns(
        power=pl.lit(_POWERS_OF_TEN).gather(shift.abs().clip(0, 38)),
        half=pl.lit(_POWERS_OF_TEN).gather((-shift - 1).clip(0, 38)) * 5,
    )
    power = pl.col("power")
    up = (
        pl.when((count + shift <= 38) | (d == 0))
        .then(d * pl.when(d == 0).then(pl.lit(1, _I128)).otherwise(power))
        + pl.col("carry").cast(_I128)
    )
    down = pl.when(-shift > 38).then(pl.lit(0, _I128)).otherwise((d + pl.col("half")) // power)
    frame = frame.with_columns(unscaled=pl.when(shift >= 0).then(up).otherwise(down))
    unscaled = pl.col("unscaled")
    in_range = pl.col("any_digit") & (unscaled < pl.lit(_POWERS_OF_TEN[precision], _I128))
    signed = pl.when(pl.col("sign") == "-").then(_neg128(unscaled)).otherwise(unscaled)
    exact = decimal_arithmetic.unscaled_to_decimal(pl.when(in_range).then(signed), decimal(38, scale))
    return frame.select(exact.alias(texts.name)).to_series()


# A double d scaled to the target's scale, v = d * 10^scale, below 2^40 in magnitude
# differs from its shortest digits scaled, D, by at most ~2 ulp(v) <= 5e-4: rounding v
# half up is exact unless v lies within _TIE_MARGIN of a tie, and there the tie t (a
# half-integer, exact in a double) decides: D >= t exactly when d >= the double nearest
# t / 10^scale (rounding is monotonic, and a tie that reads back as d is d's shortest
# digits, as no shorter decimal lies within d's half-ulp).
_FAST_LIMIT = 2.0**40
_TIE_MARGIN = 1e-3


def _decimal_of_double(doubles: pl.Series, precision: int, scale: int) -> pl.Series:
    """CAST(DOUBLE AS DECIMAL(precision, scale)) as Spark: the double's shortest decimal
    digits rounded HALF_UP (2.675 gives 2.68), as DECIMAL(38, scale), NULL where out of
    range or not finite. Rows are rounded in numpy; those too large for a double to hold
    their scaled digits, or of a scale past 18, are read from their text
    (_decimal_of_text), which costs ~10x more per row."""
    valid = doubles.is_not_null().to_numpy()
    signed = doubles.to_numpy(allow_copy=True).astype(np.float64, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(valid, np.abs(signed), 0.0)
        r = d * 10.0**scale
        fast = valid & (r < _FAST_LIMIT) & (scale <= 18)
        base = np.floor(r)
        near = np.abs(r - base - 0.5) <= _TIE_MARGIN
        up = np.where(near, d >= (base + 0.5) / 10.0**scale, r - base > 0.5)
    magnitude = np.where(fast, base + up, 0.0).astype(np.int64)
    if precision < 13:  # 10^13 > 2^40: a fast row may exceed a smaller precision
        fast &= magnitude < 10**precision
    negative = signed < 0
    slow = np.flatnonzero(valid & ~fast & (r == r) & (r < np.inf))  # NaN and infinities are NULL
    frame = pl.DataFrame({"u": np.where(negative, -magnitude, magnitude), "ok": fast})
    unscaled = pl.when(pl.col("ok")).then(pl.col("u").cast(_I128))
    out = frame.select(decimal_arithmetic.unscaled_to_decimal(unscaled, decimal(38, scale))).to_series()
    if slow.size:
        texts = doubles.gather(slow).cast(pl.String)
        out = out.scatter(slow, _decimal_of_text(texts, precision, scale))
    return out.alias(doubles.name)


def _once_per_batch(fn: Callable[[pl.Series], pl.Series]) -> Callable[[pl.Series], pl.Series]:
    """`fn` for polars' map_batches, remembering its last small batch and result: a check
    and then the value evaluate the same call on the same batch, so the second is a
    comparison. (One tuple, read and replaced whole, as polars may call from two
    threads; a hit lets the batch go, so no batch is held between steps.)"""
    last: list[tuple[pl.Series, pl.Series] | None] = [None]

    def apply(batch: pl.Series) -> pl.Series:
        seen = last[0]
        if seen is not None and seen[0].equals(batch, null_equal=True):
            last[0] = None
            return seen[1]
        out = fn(batch)
        last[0] = (batch, out) if len(batch) <= _MEMO_ROWS else None
        return out

    return apply


def _parse_decimal(texts: pl.Expr, dst: SqlType) -> pl.Expr:
    """CAST of trimmed strings to DECIMAL (see _decimal_of_text), as DECIMAL(38, scale)."""
    precision, scale = _digits(dst)
    convert = functools.partial(_decimal_of_text, precision=precision, scale=scale)
    return texts.map_batches(_once_per_batch(convert), return_dtype=pl.Decimal(38, scale))


_TRUE_STRINGS = ["t", "true", "y", "yes", "1"]
_FALSE_STRINGS = ["f", "false", "n", "no", "0"]
_DATE_RE = r"^([+-]?\d{4,})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?$"
_DATE_ONLY_RE = r"^[+-]?\d{4,}(?:-\d{1,2}(?:-\d{1,2})?)?$"
_YEAR_FIRST_RE = r"^[+-]?\d{4,}(?:[-T ]|$)"
_TIMESTAMP_FORMATS = (
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M",
)


def _from_string(x: pl.Expr, dst: SqlType) -> pl.Expr:
    """Parse trimmed strings as Spark does; unparsable input gives NULL."""
    s = x.str.strip_chars()
    dtype = polars_dtype(dst)
    if dst.is_integer or dst.is_float:
        return s.cast(dtype, strict=False)
    if dst.is_decimal:
        return _parse_decimal(s, dst).cast(dtype, strict=False)
    if dst.kind == "BOOLEAN":
        low = s.str.to_lowercase()
        return pl.when(low.is_in(_TRUE_STRINGS)).then(True).when(low.is_in(_FALSE_STRINGS)).then(False).otherwise(None)
    if dst.kind == "DATE":
        return _parse_date(s)
    if dst.kind in TIMESTAMP_KINDS:
        # Spark's date part as for a DATE: a year of 4 digits or more, then -[m]m and
        # -[d]d, each optional ('2024' is 2024-01-01 00:00); '123-03-01 10:00' is NULL
        parsed = [s.str.strptime(pl.Datetime("us"), f, strict=False) for f in _TIMESTAMP_FORMATS]
        date_only = pl.when(s.str.contains(_DATE_ONLY_RE)).then(_parse_date(s).cast(pl.Datetime("us")))
        return pl.when(s.str.contains(_YEAR_FIRST_RE)).then(pl.coalesce([*parsed, date_only]))
    raise InternalCompilerError(f"no cast from STRING to {dst}")


def _parse_date(s: pl.Expr) -> pl.Expr:
    """Spark's date strings: yyyy, yyyy-[m]m, yyyy-[m]m-[d]d, then ' ...' or 'T...'."""
    year = s.str.extract(_DATE_RE, 1)
    month = s.str.extract(_DATE_RE, 2).fill_null("1")
    day = s.str.extract(_DATE_RE, 3).fill_null("1")
    text = pl.concat_str([year, month, day], separator="-")
    return text.str.strptime(pl.Date, "%Y-%m-%d", strict=False)


def _to_string(x: pl.Expr, src: SqlType) -> pl.Expr:
    """Spark's text form of a value."""
    if src.is_float:
        return _float_to_string(x)
    if src.kind in TIMESTAMP_KINDS:
        micros = x.dt.microsecond()
        frac = pl.when(micros != 0).then(pl.lit(".") + micros.cast(pl.String).str.zfill(6).str.strip_chars_end("0"))
        return x.dt.to_string("%Y-%m-%d %H:%M:%S") + frac.fill_null("")
    return x.cast(pl.String)  # ints, decimals (full scale), 'true'/'false', yyyy-mm-dd


def _float_to_string(x: pl.Expr) -> pl.Expr:
    """Java's Double.toString: plain in [1e-3, 1e7), else d.dddE±n.

    polars prints the same shortest round-trip digits but picks other notations, so
    the digits are rearranged: '1.5e+30' -> '1.5E30', '12345678.0' -> '1.2345678E7',
    '0.0001' -> '1.0E-4'.
    """
    s = x.cast(pl.String)
    mag = x.abs()
    exp_re = r"^(-?)(\d)(?:\.(\d+))?e\+?(-?\d+)$"
    big_re = r"^(-?)(\d)(\d*)\.(\d+)$"
    small_re = r"^(-?)0\.(0*)(\d)(\d*)$"

    def grp(pattern: str, i: int) -> pl.Expr:
        return s.str.extract(pattern, i)

    def frac_or_zero(e: pl.Expr) -> pl.Expr:
        return pl.when(e.fill_null("") == "").then(pl.lit("0")).otherwise(e)

    from_exp = pl.concat_str(
        [grp(exp_re, 1), grp(exp_re, 2), pl.lit("."), frac_or_zero(grp(exp_re, 3)), pl.lit("E"), grp(exp_re, 4)]
    )
    big_frac = (grp(big_re, 3) + grp(big_re, 4)).str.strip_chars_end("0")
    from_big = pl.concat_str(
        [
            grp(big_re, 1),
            grp(big_re, 2),
            pl.lit("."),
            frac_or_zero(big_frac),
            pl.lit("E"),
            grp(big_re, 3).str.len_chars().cast(pl.String),
        ]
    )
    small_exp = (grp(small_re, 2).str.len_chars() + 1).cast(pl.String)
    from_small = pl.concat_str(
        [grp(small_re, 1), grp(small_re, 3), pl.lit("."), frac_or_zero(grp(small_re, 4)), pl.lit("E-"), small_exp]
    )
    return (
        pl.when(x.is_nan())
        .then(pl.lit("NaN"))
        .when(x == float("inf"))
        .then(pl.lit("Infinity"))
        .when(x == float("-inf"))
        .then(pl.lit("-Infinity"))
        .when((mag == 0) | ((mag >= 1e-3) & (mag < 1e7) & ~s.str.contains("e")))
        .then(s)
        .when(s.str.contains("e"))
        .then(from_exp)
        .when(mag >= 1e7)
        .then(from_big)
        .otherwise(from_small)
    )


# ---------------------------------------------------------------------------
# Strings

_REGEX_META = set("\\.+*?()|[]{}^$")


def like_to_regex(pattern: str) -> str:
    """An anchored regex for a SQL LIKE pattern (% any run, _ one char, \\ escapes)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
            ch = pattern[i]
            out.append("\\" + ch if ch in _REGEX_META else ch)
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append("\\" + ch if ch in _REGEX_META else ch)
        i += 1
    return "^(?s:" + "".join(out) + ")$"


# Private-use characters mark escaped pattern characters while a dynamic pattern
# is translated (patterns containing them are not supported).
_ESC_OPEN, _ESC_CLOSE, _LIT_PCT, _LIT_USC = "\ue000", "\ue001", "\ue002", "\ue003"


def _like_regex_expr(p: pl.Expr) -> pl.Expr:
    """`like_to_regex` as a polars expression, for patterns that are not constants."""
    marked = p.str.replace_all(r"(?s)\\(.)", _ESC_OPEN + "${1}" + _ESC_CLOSE)
    marked = (
        marked.str.replace_all(_ESC_OPEN + "%" + _ESC_CLOSE, _LIT_PCT, literal=True)
        .str.replace_all(_ESC_OPEN + "_" + _ESC_CLOSE, _LIT_USC, literal=True)
        .str.replace_all(f"[{_ESC_OPEN}{_ESC_CLOSE}]", "")
    )
    body = (
        marked.str.escape_regex()
        .str.replace_all("%", ".*", literal=True)
        .str.replace_all("_", ".", literal=True)
        .str.replace_all(_LIT_PCT, "%", literal=True)
        .str.replace_all(_LIT_USC, "_", literal=True)
    )
    return pl.lit("^(?s:") + body + pl.lit(")$")


def _like(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    value, pattern = c.args(call, guard)
    pat = call.args[1]
    if isinstance(pat, Lit):
        if pat.value is None:
            return pl.lit(None, dtype=pl.Boolean)
        text = str(pat.value)
        if not any(ch in text for ch in "%_\\"):
            return value == pl.lit(text)  # no wildcard: plain equality
        return value.str.contains(like_to_regex(text))
    return value.str.contains(_like_regex_expr(pattern))


def _concat(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    args = [a.cast(pl.String) for a in c.args(call, guard)]
    return pl.concat_str(args, ignore_nulls=False)


def _clamp0(e: pl.Expr) -> pl.Expr:
    return pl.when(e < 0).then(0).otherwise(e)


def substring_expr(s: pl.Expr, pos: pl.Expr, length: pl.Expr | None) -> pl.Expr:
    """Spark's substring: 1-based; pos 0 acts as 1; pos < 0 counts from the end.

    As Spark, the window [start, start+len) is computed before clamping start to
    the string, so substring('abc', -5, 3) is 'a'; without a length the length is
    2^31 - 1, so substring('abc', -2147483648) is 'ab'. NULL handling is the caller's.
    """
    n = s.str.len_chars().cast(pl.Int64)
    pos = pos.cast(pl.Int64)
    start0 = pl.when(pos > 0).then(pos - 1).when(pos < 0).then(n + pos).otherwise(0)
    start = _clamp0(start0)
    end = start0 + (_INT_MAX if length is None else length.cast(pl.Int64))
    return s.str.slice(start, _clamp0(end - start))


_INT_MAX = pl.lit(2**31 - 1, pl.Int64)


def _substring(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    args = c.args(call, guard)
    length = args[2] if len(args) > 2 else None
    return _null_if_any_null(substring_expr(args[0], args[1], length), args)


def _left(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    s, n = c.args(call, guard)
    return _null_if_any_null(substring_expr(s, pl.lit(1, pl.Int64), n), [s, n])


def _right(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    s, n = c.args(call, guard)
    n64 = n.cast(pl.Int64)
    value = pl.when(n64 <= 0).then(pl.lit("")).otherwise(substring_expr(s, -n64, None))
    return _null_if_any_null(value, [s, n])


def _replace(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """replace(s, search, rep): every occurrence; an empty search leaves s as is."""
    s, search, rep = c.args(call, guard)
    args = [s, search, rep]
    rep = rep.fill_null("")  # polars rejects NULL replacements; the result is NULL anyway
    if isinstance(call.args[0], Lit) and not isinstance(call.args[2], Lit):
        # a constant s beside a column of replacements: polars replaces only in a column of
        # the replacements' length, so the constant is spread over the rows first
        s = pl.when(rep.is_null()).then(s).otherwise(s)
    pat = call.args[1]
    if isinstance(pat, Lit) and pat.value is not None:
        if pat.value == "":
            return _null_if_any_null(s, args)
        replaced = s.str.replace_all(str(pat.value), rep, literal=True)
    else:
        # polars cannot replace with per-row patterns; split and re-join instead.
        joined = s.str.split(search.fill_null("")).list.join(rep)
        replaced = pl.when(search == "").then(s).otherwise(joined)
    return _null_if_any_null(replaced, args)


def _string_unary(fn: Callable[[pl.Expr], pl.Expr]) -> Handler:
    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        (a,) = c.args(call, guard)
        return fn(a.cast(pl.String))

    return handler


# ---------------------------------------------------------------------------
# Numbers


def _round(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
    """round(x[, d]) half away from zero, bround half to even; d is a constant (as Spark requires)."""
    x = c.compile(call.args[0], guard)
    digits = _constant_int(call.args[1]) if len(call.args) > 1 else 0
    if digits is None:
        return pl.lit(None, dtype=polars_dtype(call.type))
    src, t = call.args[0].type, call.type
    even = call.fn == "bround"
    if src.is_float:
        return _round_float(x, digits, even, src.kind == "FLOAT")
    if digits >= 0:
        if src.is_decimal:
            return c.fit(x.round(digits, mode="half_to_even" if even else _HALF_UP), t, guard, DECIMAL_OVERFLOW)
        return x  # an integer has no fractional digits
    # Negative digits: the tie point m*10^k + 5*10^(k-1) is an integer, so rounding
    # the truncated integer part gives the same answer as rounding x itself.
    rounded = _round_int128(_i128(x), -digits, even)
    message = INTEGER_OVERFLOW if t.is_integer else DECIMAL_OVERFLOW
    return c.fit(rounded, t, guard, message)


def _round_float(x: pl.Expr, digits: int, even: bool, single: bool) -> pl.Expr:
    """Round a FLOAT or DOUBLE as Spark does: its shortest decimal form (Java's toString,
    `BigDecimal(d.toString)`), not its binary value, rounded at `digits`. So 1.005 (binary
    1.00499999999999989...) rounds to 1.01. In numpy: polars divides by a scalar through
    its reciprocal, which is not the IEEE division the tie test below relies on."""
    dtype = pl.Float32() if single else pl.Float64()
    return x.map_batches(lambda s: _round_float_batch(s, digits, even), return_dtype=dtype)


def _round_float_batch(s: pl.Series, digits: int, even: bool) -> pl.Series:
    """With m = floor(|x|·10^d), the decimal form is at or above the tie m + ½ exactly when
    |x| >= fl((m + ½)/10^d): m + ½ and 10^d are exact floats, so IEEE division rounds the
    tie exactly as parsing its decimal string does, and the decimal form of x rounds to x.
    Where x has no bit below 10^-d (|x|·10^d >= 2^mantissa) it is returned as is."""
    x = s.to_numpy()
    ftype = x.dtype.type
    single = ftype == np.float32
    exact = 2.0 ** (23 if single else 52)
    if digits > (45 if single else 324):
        return s  # finer than the smallest subnormal: nothing to round
    if digits < -(39 if single else 309):  # coarser than the largest float: finite values round to 0
        zeroed = np.where(np.isfinite(x), 0.0, x).astype(x.dtype)
        return _with_nulls_of(s, pl.Series(s.name, zeroed, dtype=s.dtype))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        a = np.abs(x)
        p = ftype(10.0) ** ftype(abs(digits)) if abs(digits) <= (10 if single else 22) else None
        if p is None:  # 10^d is not exact: scale in two exact steps
            half = abs(digits) // 2
            p1, p2 = ftype(10.0) ** ftype(half), ftype(10.0) ** ftype(abs(digits) - half)
            scaled = (a * p1) * p2 if digits > 0 else (a / p1) / p2
        else:
            scaled = a * p if digits >= 0 else a / p
        m = np.floor(scaled)
        t = m + ftype(0.5)
        if p is None:
            tie = (t / p2) / p1 if digits > 0 else (t * p2) * p1
        else:
            tie = t / p if digits >= 0 else t * p
        up = (a > tie) | ((a == tie) & ((np.fmod(m, 2) == 1) if even else True))
        m = np.where(up, m + 1, m)
        if p is None:
            r = (m / p2) / p1 if digits > 0 else (m * p2) * p1
        else:
            r = m / p if digits >= 0 else m * p
        r = np.where(x < 0, -r, r) + ftype(0.0)  # + 0.0 turns -0.0 into 0.0: BigDecimal has no -0
        keep = ~np.isfinite(x) | (scaled >= exact) if digits >= 0 else ~np.isfinite(x)
        out = np.where(keep, x, r).astype(x.dtype)
    return _with_nulls_of(s, pl.Series(s.name, out, dtype=s.dtype))


def _with_nulls_of(source: pl.Series, values: pl.Series) -> pl.Series:
    """`values` with NULL where `source` is NULL (numpy saw those as NaN)."""
    nulls = source.is_null()
    return values.scatter(np.flatnonzero(nulls.to_numpy()), None) if nulls.any() else values


def _round_int128(x: pl.Expr, k: int, even: bool = False) -> pl.Expr:
    """Round an Int128 to a multiple of 10^k, half away from zero (or half to even)."""
    if k > 38:
        return pl.when(x.is_null()).then(None).otherwise(pl.lit(0, _I128))
    f = pl.lit(10**k, _I128)
    q, r = x.abs() // f, x.abs() % f
    half = pl.lit(5 * 10 ** (k - 1), _I128)
    up = (r > half) | ((r == half) & ((q % 2 == 1) if even else pl.lit(True)))
    mag = pl.when(up).then(q + 1).otherwise(q) * f
    return pl.when(x < 0).then(_neg128(mag)).otherwise(mag)


def _constant_int(e: Scalar) -> int | None:
    if isinstance(e, Lit):
        return None if e.value is None else int(e.value)
    if isinstance(e, Call) and e.fn in ("cast", "try_cast", "neg") and len(e.args) == 1:
        inner = _constant_int(e.args[0])
        return None if inner is None else (-inner if e.fn == "neg" else inner)
    raise InternalCompilerError(f"round digits must be a constant, got {e}")


def _floor_ceil(up: bool) -> Handler:
    """floor/ceil; DOUBLE gives BIGINT in Spark (follow Call.type), range-checked."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        (x,) = c.args(call, guard)
        src, t = call.args[0].type, call.type
        if src.is_integer:
            return c.fit(x, t, guard, INTEGER_OVERFLOW)
        raw = x.ceil() if up else x.floor()
        if t.is_integer:
            if src.is_float:  # Spark (ANSI too): floor(NaN) and ceil(NaN) are 0
                raw = pl.when(x.is_nan()).then(0.0).otherwise(raw)
            return c.fit(raw, t, guard, INTEGER_OVERFLOW)
        if t.is_decimal:
            return c.fit(raw, t, guard, DECIMAL_OVERFLOW)
        return raw

    return handler


def _extremum(largest: bool) -> Handler:
    """greatest/least: NULL arguments are skipped; NULL only if all are NULL. NaN is the
    largest DOUBLE, as Spark orders them (polars' max skips it)."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        dtype = polars_dtype(call.type)
        args = [a.cast(dtype, strict=False) for a in c.args(call, guard)]
        if not largest:
            return pl.min_horizontal(args)  # (NaN only where every value is NaN: Spark's too)
        if not call.type.is_float:
            return pl.max_horizontal(args)
        nan = pl.any_horizontal([a.is_nan() for a in args])
        return pl.when(nan).then(pl.lit(float("nan"), dtype)).otherwise(pl.max_horizontal(args))

    return handler


# ---------------------------------------------------------------------------
# Dispatch

_HANDLERS: dict[str, Handler] = {
    "add": _binary_arith(operator.add),
    "sub": _binary_arith(operator.sub),
    "mul": _binary_arith(operator.mul),
    "neg": _neg,
    "abs": _abs,
    "bit_and": _bitwise(operator.and_),
    "bit_or": _bitwise(operator.or_),
    "bit_xor": _bitwise(operator.xor),
    "bit_not": _bitwise(None),
    "bit_count": lambda c, call, guard: c.args(call, guard)[0].bitwise_count_ones().cast(pl.Int32),
    "div": _division("div", raising=True),
    "div_or_null": _division("div", raising=False),
    "ieee_div": _ieee_div,
    "int_div": _division("int_div", raising=True),
    "int_div_or_null": _division("int_div", raising=False),
    "mod": _division("mod", raising=True),
    "mod_or_null": _division("mod", raising=False),
    "pmod": _pmod,
    "eq": _comparison(operator.eq),
    "ne": _comparison(operator.ne),
    "lt": _comparison(operator.lt),
    "le": _comparison(operator.le),
    "gt": _comparison(operator.gt),
    "ge": _comparison(operator.ge),
    "null_safe_eq": _null_safe_eq,
    "and": _and,
    "or": _or,
    "not": _not,
    "is_null": _unary(lambda a: a.is_null()),
    "is_not_null": _unary(lambda a: a.is_not_null()),
    "is_true": _unary(lambda a: a.cast(pl.Boolean).fill_null(False)),
    "is_false": _unary(lambda a: (~a.cast(pl.Boolean)).fill_null(False)),
    "case": _case,
    "coalesce": _coalesce,
    "nullif": _nullif,
    "error_if": _error_if,
    "store_char": _store_char,
    "cast": _cast_handler(strict=True),
    "try_cast": _cast_handler(strict=False),
    "like": _like,
    "concat": _concat,
    "upper": _string_unary(lambda s: s.str.to_uppercase()),
    "lower": _string_unary(lambda s: s.str.to_lowercase()),
    "length": _string_unary(lambda s: s.str.len_chars()),
    # Spark's trim functions remove spaces only, not all whitespace.
    "trim": _string_unary(lambda s: s.str.strip_chars(" ")),
    "ltrim": _string_unary(lambda s: s.str.strip_chars_start(" ")),
    "rtrim": _string_unary(lambda s: s.str.strip_chars_end(" ")),
    "substring": _substring,
    "replace": _replace,
    "left": _left,
    "right": _right,
    "round": _round,
    "bround": _round,
    "floor": _floor_ceil(up=False),
    "ceil": _floor_ceil(up=True),
    "greatest": _extremum(largest=True),
    "least": _extremum(largest=False),
}


def _simple(kernel: Callable[[list[pl.Expr], Call], pl.Expr]) -> Handler:
    """A function that evaluates all its arguments and raises no error."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        return kernel(c.args(call, guard), call)

    return handler


# The rows on which a function raises, from its arguments and its value (None: none).
Failing = Callable[[list[pl.Expr], Call, pl.Expr], pl.Expr | None]


def _checked(kernel: Callable[[list[pl.Expr], Call], pl.Expr], failing: Failing, message: str) -> Handler:
    """A kernel that raises `message` on the rows `failing` names."""

    def handler(c: _Compiler, call: Call, guard: Guard) -> pl.Expr:
        args = c.args(call, guard)
        out = kernel(args, call)
        rows = failing(args, call, out)
        if rows is not None:
            c.check(rows, message.replace("{fn}", call.fn), guard)
        return out

    return handler


_HANDLERS.update(
    {name: _simple(k) for name, k in {**DATETIME_KERNELS, **STRING_KERNELS, **ARRAY_KERNELS, **MATH_KERNELS}.items()}
)


def _calendar_unreached(args: list[pl.Expr], call: Call, out: pl.Expr) -> pl.Expr:
    """A calendar field that is NULL from non-NULL arguments: a date chrono does not reach."""
    return out.is_null() & ~_any_null(args)


# A string result longer than Spark's longest string raises, as Spark fails there, instead
# of allocating gigabytes per row (lpad, repeat); a calendar field of a date chrono does
# not reach raises, instead of being NULL.
_TOO_LONG = f"the result of {{fn}} would be longer than the longest string ({MAX_STRING_BYTES:,} bytes)"
_HANDLERS.update(
    {name: _checked(STRING_KERNELS[name], too_large, _TOO_LONG) for name, too_large in STRING_LIMITS.items()}
)
_HANDLERS.update(
    {name: _checked(DATETIME_KERNELS[name], _calendar_unreached, _CALENDAR_RANGE) for name in CALENDAR_FIELDS}
)
_HANDLERS.update({f"try_{fn}": _try(fn) for fn in TRY_OPERATORS})

_missing = set(_HANDLERS) ^ FUNCTIONS
if _missing:  # pragma: no cover - a catalogue/runtime mismatch is a programming error
    raise InternalCompilerError(f"runtime functions out of sync with the catalogue: {_missing}")

__all__ = [
    "Check",
    "CompiledScalar",
    "compile_scalar",
    "compile_scalars",
    "evaluate",
    "evaluate_predicate",
    "like_to_regex",
    "literal",
    "run_checks",
]

"""Spark's mathematical functions, typed as Spark 4 types them.

Rules receive the sqlglot node and `bind` (binds a subexpression in the caller's scope).
- The transcendental functions (sqrt, cbrt, exp, expm1, ln, log, log10, log2, log1p,
  power, the trigonometric and hyperbolic functions, atan2, hypot) take DOUBLE (other
  numbers and numeric strings are cast, as Spark casts them) and return DOUBLE with
  IEEE results: sqrt(-1) is NaN, exp(1000) is Infinity. Spark's exceptions: the
  logarithms are NULL at or below their asymptote (ln(0), log10(-1), log1p(-1),
  log(b, x) with b <= 0 or x <= 0); log2(x) is ln(x) / ln(2) and asinh, acosh, atanh
  use Spark's formulas over ln and log1p.
- sign/signum, degrees, radians, rint: DOUBLE; pi() and e() are constants.
- isnan(x) is false for NULL; nanvl(a, b) is b where a is NaN.
- factorial(n): BIGINT, NULL outside 0..20.
- zeroifnull(x) is coalesce(x, 0), nullifzero(x) is nullif(x, 0).
- try_add, try_subtract, try_multiply, try_divide, try_mod: the operator's result, NULL
  where the operator itself would raise (overflow, a zero divisor); an error in an
  argument still raises, as in Spark.
- shiftleft, shiftright, shiftrightunsigned (and `<<`, `>>`): Java's shifts of an INT
  (TINYINT and SMALLINT widened to it) or a BIGINT, in its type, by an INT distance taken
  mod 32 or 64 as Java takes it; they wrap, and never overflow. Other types are refused.
pmod is bound beside `%` in bind_scalar.py, whose typing it shares.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import call_name, span_of, written_name
from dbspc.compiler.frontend.type_rules import TypeMismatch, coerce
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import BIGINT, BOOLEAN, DOUBLE, INT, NULL

Bind = Callable[[exp.Expression], Scalar]
Rule = Callable[[exp.Expression, Bind], Scalar]

# The arithmetic operators whose TRY_ form returns NULL instead of raising.
TRY_OPERATORS = ("add", "sub", "mul", "div", "mod")


def _double(node: exp.Expression, bind: Bind) -> Scalar:
    value = bind(node)
    if value.type == BOOLEAN:  # (Spark casts numbers and strings to DOUBLE here, not a BOOLEAN)
        raise TypeMismatch("cannot convert BOOLEAN to DOUBLE")
    return coerce(value, DOUBLE)


def _unary(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        return Call(DOUBLE, fn, (_double(node.this, bind),))

    return rule


def _binary(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        return Call(DOUBLE, fn, (_double(node.this, bind), _double(node.expression, bind)))

    return rule


def _log(node: exp.Expression, bind: Bind) -> Scalar:
    """LOG(b, x); sqlglot also parses log10(x) and log2(x) as LOG with the base added."""
    name = call_name(node)
    if name in ("log10", "log2") and node.expression is not None:
        return Call(DOUBLE, name, (_double(node.expression, bind),))
    if node.expression is None:  # a one-argument LOG is the natural logarithm
        return Call(DOUBLE, "ln", (_double(node.this, bind),))
    return Call(DOUBLE, "log", (_double(node.this, bind), _double(node.expression, bind)))


def _arguments(node: exp.Expression, count: int) -> list[exp.Expression]:
    args = list(node.expressions) if isinstance(node, exp.Anonymous) else [node.this]
    if len(args) != count:
        raise UnsupportedSql(f"{written_name(node)}() takes {count} argument(s), not {len(args)}", span_of(node))
    return args


def _constant(value: float) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        _arguments(node, 0)
        return Lit(DOUBLE, value)

    return rule


def _pi(node: exp.Expression, bind: Bind) -> Scalar:
    return Lit(DOUBLE, math.pi)


def _isnan(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(BOOLEAN, "isnan", (_double(node.this, bind),))


def _nanvl(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(DOUBLE, "nanvl", (_double(node.this, bind), _double(node.expression, bind)))


def _factorial(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(BIGINT, "factorial", (coerce(bind(node.this), INT),))


def _signed(negate: bool) -> Rule:
    """negative(x), positive(x): Spark's UnaryMinus and UnaryPositive of a number, in its
    type. negative() negates when evaluated, even a literal (where `-` before a literal is
    part of it): negative of the least INT overflows, and a DECIMAL of more than 34
    digits is rounded as Spark's negation rounds it."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        (arg,) = _arguments(node, 1)
        x = bind(arg)
        if x.type == NULL:
            return x
        if not x.type.is_numeric:
            raise SqlError(f"{written_name(node)}() needs a number, not {x.type}", span_of(node))
        return Call(x.type, "neg", (x,)) if negate else x

    return rule


def _anonymous_unary(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        (arg,) = _arguments(node, 1)
        return Call(DOUBLE, fn, (_double(arg, bind),))

    return rule


def _hypot(node: exp.Expression, bind: Bind) -> Scalar:
    a, b = _arguments(node, 2)
    return Call(DOUBLE, "hypot", (_double(a, bind), _double(b, bind)))


def _zero_if_null(node: exp.Expression, bind: Bind) -> Scalar:
    (arg,) = _arguments(node, 1)
    return bind(exp.Coalesce(this=arg.copy(), expressions=[exp.Literal.number(0)]))


def _null_if_zero(node: exp.Expression, bind: Bind) -> Scalar:
    (arg,) = _arguments(node, 1)
    return bind(exp.Nullif(this=arg.copy(), expression=exp.Literal.number(0)))


def _try(operator: type[exp.Expression]) -> Rule:
    """TRY_ADD(a, b) and the rest: the operator bound as written, then its TRY_ form."""

    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        if isinstance(node, exp.Anonymous):
            a, b = _arguments(node, 2)
        else:
            a, b = node.this, node.expression
        bound = bind(operator(this=a.copy(), expression=b.copy()))
        if isinstance(bound, Lit):  # folded as Spark folds it: of constants, or over a NULL
            return bound
        if not (isinstance(bound, Call) and bound.fn in TRY_OPERATORS):
            raise UnsupportedSql(
                f"{written_name(node)}() is supported on numbers only, not {bound.type}", span_of(node)
            )
        if any(isinstance(x, Call) and x.fn == "cast" and x.args[0].type.kind == "STRING" for x in bound.args):
            # Spark's TRY would also turn the cast's own error into NULL
            raise UnsupportedSql(f"{written_name(node)}() of a STRING is not supported", span_of(node))
        return Call(bound.type, f"try_{bound.fn}", bound.args)

    return rule


# as the user may have written them (sqlglot reads shiftleft and << alike)
_SHIFTS = {
    "shift_left": "shiftleft (<<)",
    "shift_right": "shiftright (>>)",
    "shift_right_unsigned": "shiftrightunsigned",
}


def _shift(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        if isinstance(node, exp.Anonymous):
            value_node, by_node = _arguments(node, 2)
        else:
            value_node, by_node = node.this, node.expression
        x, by = bind(value_node), bind(by_node)
        t = BIGINT if x.type == BIGINT else INT
        for arg, what in ((x, "value"), (by, "distance")):
            if arg.type != NULL and not arg.type.is_integer:
                problem = f"{_SHIFTS[fn]} of a {arg.type} {what}: only integer types are supported"
                raise UnsupportedSql(problem, span_of(node))
        if NULL in (x.type, by.type):
            return Lit(t, None)
        return Call(t, fn, (coerce(x, t), coerce(by, INT)))

    return rule


RULES: dict[type[exp.Expression], Rule] = {
    exp.Negative: _signed(negate=True),
    exp.Sqrt: _unary("sqrt"),
    exp.Cbrt: _unary("cbrt"),
    exp.Exp: _unary("exp"),
    exp.Ln: _unary("ln"),
    exp.Log: _log,
    exp.Pow: _binary("power"),
    exp.Sign: _unary("sign"),
    exp.Sin: _unary("sin"),
    exp.Cos: _unary("cos"),
    exp.Tan: _unary("tan"),
    exp.Asin: _unary("asin"),
    exp.Acos: _unary("acos"),
    exp.Atan: _unary("atan"),
    exp.Atan2: _binary("atan2"),
    exp.Sinh: _unary("sinh"),
    exp.Cosh: _unary("cosh"),
    exp.Tanh: _unary("tanh"),
    exp.Asinh: _unary("asinh"),
    exp.Acosh: _unary("acosh"),
    exp.Atanh: _unary("atanh"),
    exp.Cot: _unary("cot"),
    exp.Sec: _unary("sec"),
    exp.Csc: _unary("csc"),
    exp.Degrees: _unary("degrees"),
    exp.Radians: _unary("radians"),
    exp.Rint: _unary("rint"),
    exp.Pi: _pi,
    exp.IsNan: _isnan,
    exp.Nanvl: _nanvl,
    exp.Factorial: _factorial,
    exp.BitwiseLeftShift: _shift("shift_left"),
    exp.BitwiseRightShift: _shift("shift_right"),
    exp.SafeAdd: _try(exp.Add),
    exp.SafeSubtract: _try(exp.Sub),
    exp.SafeMultiply: _try(exp.Mul),
    exp.SafeDivide: _try(exp.Div),
}

# Functions sqlglot parses as Anonymous, by lower-case name.
ANONYMOUS_RULES: dict[str, Rule] = {
    "expm1": _anonymous_unary("expm1"),
    "log1p": _anonymous_unary("log1p"),
    "e": _constant(math.e),
    "hypot": _hypot,
    "zeroifnull": _zero_if_null,
    "nullifzero": _null_if_zero,
    "try_mod": _try(exp.Mod),
    "positive": _signed(negate=False),
    "shiftrightunsigned": _shift("shift_right_unsigned"),
}

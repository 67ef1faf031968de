"""Bind qualified sqlglot scalar expressions into typed `Scalar` IR.

Names were resolved by sqlglot's qualify; this module decides types (type_rules), picks
the dialect's function (Spark's `/` is `div`, SQLite's integer `/` is `int_div_or_null`)
and refuses what it does not know, naming the construct and its position.
"""

from __future__ import annotations

import datetime as dt
import decimal as dec
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from dbspc.compiler.dialect import Semantics
from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_aggregate import AGGREGATE_NODES
from dbspc.compiler.frontend.bind_arrays import ARRAY_FUNCTIONS
from dbspc.compiler.frontend.bind_arrays import RULES as ARRAY_RULES
from dbspc.compiler.frontend.bind_datetime import ANONYMOUS_RULES as DATETIME_ANONYMOUS
from dbspc.compiler.frontend.bind_datetime import RULES as DATETIME_RULES
from dbspc.compiler.frontend.bind_datetime import interval_arithmetic
from dbspc.compiler.frontend.bind_math import ANONYMOUS_RULES as MATH_ANONYMOUS
from dbspc.compiler.frontend.bind_math import RULES as MATH_RULES
from dbspc.compiler.frontend.bind_strings import ANONYMOUS_RULES as STRING_ANONYMOUS
from dbspc.compiler.frontend.bind_strings import RULES as STRING_RULES
from dbspc.compiler.frontend.ddl import checked_decimal, sql_type
from dbspc.compiler.frontend.positions import SQLGLOT_FAILURES, span_of, written_name
from dbspc.compiler.frontend.reassociate import reassociated
from dbspc.compiler.frontend.type_rules import TypeMismatch, arithmetic_type, as_decimal, castable, coerce, common_type
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar, reads_no_column
from dbspc.compiler.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_KINDS,
    TIMESTAMP_NTZ,
    SqlType,
    decimal,
)


@dataclass
class ScalarScope:
    """What a scalar may refer to.

    `columns` maps (table alias, column name) to (index, type). `replacements` maps the
    SQL text of a whole subexpression (a GROUP BY expression or an aggregate call) to
    the column that holds its value after aggregation. With `only_replacements`, a bare
    column outside of them is an error (it is not in GROUP BY).
    """

    columns: dict[tuple[str, str], tuple[int, SqlType]]
    semantics: Semantics
    replacements: dict[str, Scalar] = field(default_factory=dict)
    only_replacements: bool = False
    context: str = "expression"
    # per node (by id, with the node to guard against reuse): its Column and Literal
    # nodes, each printed as at least one character (`_may_be_replaced`)
    leaves: dict[int, tuple[exp.Expression, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def dialect(self) -> str:
        """The sqlglot dialect the user's expressions are printed in."""
        return self.semantics.dialect


def bind_scalar(node: exp.Expression, scope: ScalarScope) -> Scalar:
    """Bind one expression; every SqlError names the construct and its position."""
    if scope.replacements and _may_be_replaced(node, scope):
        hit = scope.replacements.get(_printed(node))
        if hit is not None:
            return hit
    bound = _refuse_arrays(_bind_node(node, scope), node, scope)
    if scope.semantics.folds_constants:
        bound = reassociated(bound)
    return _null_propagated(bound, scope.semantics.folds_constants)


# Calls that are NULL when any argument is (Spark's NullIntolerant expressions: arithmetic,
# comparisons, bitwise operators, the mathematical functions, date fields and date
# arithmetic, upper/lower/length). Spark's optimizer replaces such a call with a NULL
# argument by NULL (NullPropagation), so its other arguments are never evaluated:
# `a / b + NULL` is NULL where b = 0, not a division by zero, and so is
# `CAST('x' AS INT) = year(CAST(NULL AS DATE))`.
_NULL_INTOLERANT = frozenset(
    """add sub mul neg abs div div_or_null ieee_div int_div int_div_or_null mod mod_or_null pmod
    eq ne lt le gt ge not
    bit_and bit_or bit_xor bit_not bit_count shift_left shift_right shift_right_unsigned
    sqrt cbrt exp expm1 ln log10 log2 log1p log power sin cos tan asin acos atan atan2 hypot sinh cosh
    tanh asinh acosh atanh cot sec csc degrees radians sign rint
    year month day quarter dayofweek dayofyear weekofyear hour minute second
    datediff date_add_days add_months add_months_overflow last_day unix_date unix_seconds unix_millis unix_micros
    make_date make_date_invalid make_timestamp make_timestamp_invalid
    upper lower length""".split()
)


_CASTS = ("cast", "try_cast")


def _null_propagated(result: Scalar, folds_constants: bool) -> Scalar:
    """A NULL-intolerant call over a NULL, or a check around one (add_months' error_if),
    as the NULL literal it is; a cast of a NULL stays as written. With `folds_constants`
    (Spark), a constant operand whose value is NULL counts as one: Spark folds `ln(-3.5)`
    to NULL before NullPropagation, so `(f % f) * ln(-3.5)` never divides."""
    if not isinstance(result, Call) or result.fn in _CASTS:
        return result
    if _always_null(result) or (
        folds_constants and result.fn in _NULL_INTOLERANT and any(map(_folds_to_null, result.args))
    ):
        return Lit(result.type, None)
    return result


def _folds_to_null(e: Scalar) -> bool:
    """A call of constants that evaluates to NULL (not to an error, which Spark raises)."""
    if not isinstance(e, Call) or not reads_no_column(e):
        return False
    from dbspc.runtime.expressions import constant_value  # (the runtime's kernels judge)

    evaluated, value = constant_value(e)
    return evaluated and value is None


def _may_be_replaced(node: exp.Expression, scope: ScalarScope) -> bool:
    """Whether `node` could print as long as a replacement's text: a print is at least one
    character per Column and Literal in it. Printing every node of a deep expression to
    look it up cost time quadratic in its depth (400 nested additions under GROUP BY: 6.6 s
    to compile); the count is made once per node."""
    return _leaf_count(node, scope.leaves) <= max(map(len, scope.replacements))


def _leaf_count(node: exp.Expression, memo: dict[int, tuple[exp.Expression, int]]) -> int:
    hit = memo.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    n = sum(_leaf_count(c, memo) for c in node.iter_expressions()) + isinstance(node, (exp.Column, exp.Literal))
    memo[id(node)] = (node, n)
    return n


def _refuse_arrays(result: Scalar, node: exp.Expression, scope: ScalarScope) -> Scalar:
    """An ARRAY value may only be read whole or by the ARRAY functions: comparisons,
    CAST, CASE and the rest are not defined on it here."""
    if isinstance(result, Call) and result.fn not in ARRAY_FUNCTIONS and any(a.type.is_array for a in result.args):
        raise UnsupportedSql(
            f"'{_short(node, scope)}' uses an ARRAY value; ARRAY values support only SIZE, ARRAY_CONTAINS, "
            "SORT_ARRAY and IS [NOT] NULL",
            span_of(node),
        )
    return result


def _bind_node(node: exp.Expression, scope: ScalarScope) -> Scalar:
    binder = _BINDERS.get(type(node))
    rule = _FUNCTION_RULES.get(type(node)) if binder is None else None
    if rule is None and isinstance(node, exp.Anonymous):
        rule = _ANONYMOUS_RULES.get(node.name.lower())
    if rule is not None and rule in _MATH:
        _refuse_outside_spark_math(node, scope)
    if rule is not None:
        try:
            return rule(node, lambda e: bind_scalar(e, scope))
        except TypeMismatch as e:
            raise SqlError(f"{e} in '{_short(node, scope)}'", span_of(node)) from None
    if binder is None:
        if isinstance(node, exp.Anonymous):
            by_name = _ANONYMOUS_BINDERS.get(node.name.lower())
            if by_name is not None:
                return by_name(node, scope)
            raise UnsupportedSql(f"function {node.name.upper()}() is unknown or not supported", span_of(node))
        if isinstance(node, exp.Func) and type(node) not in AGGREGATE_NODES:
            name = written_name(node)
            raise UnsupportedSql(f"function {name}() is not supported yet", span_of(node))
        if type(node) in AGGREGATE_NODES:
            raise SqlError(f"aggregate {_unquoted(node, scope)} is not allowed in {scope.context}", span_of(node))
        if isinstance(node, exp.Interval):
            raise UnsupportedSql("INTERVAL values are not supported yet", span_of(node))
        raise UnsupportedSql(
            f"{type(node).__name__} expression '{_short(node, scope)}' is not supported", span_of(node)
        )
    try:
        return binder(node, scope)
    except TypeMismatch as e:
        raise SqlError(f"{e} in '{_short(node, scope)}'", span_of(node)) from None


def _printed(node: exp.Expression, dialect: str | None = None) -> str:
    """`node` as SQL; sqlglot cannot print some calls it read with arguments of the
    wrong kind (`next_value_for(x, x)`), which are then shown by their name."""
    try:
        return node.sql(dialect)
    except SQLGLOT_FAILURES:
        return f"{written_name(node)}(...)"


def _short(node: exp.Expression | exp.Binary, scope: ScalarScope) -> str:
    """The expression as the user wrote it, without the qualification qualify added."""
    plain = node.copy().transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)
    text = _printed(plain, scope.dialect)
    return text if len(text) <= 60 else text[:57] + "..."


def _unquoted(node: exp.Expression, scope: ScalarScope) -> str:
    """The expression without the quotes qualify put on every name (`x`.`k` is x.k)."""
    plain = node.copy().transform(
        lambda n: exp.to_identifier(n.name) if isinstance(n, exp.Identifier) and n.name.isidentifier() else n
    )
    return plain.sql(scope.dialect)


def _bind_column(node: exp.Column, scope: ScalarScope) -> Scalar:
    key = (node.table.lower(), node.name.lower())
    hit = scope.columns.get(key)
    if hit is None:
        raise SqlError(f"column '{node.sql()}' cannot be resolved", span_of(node))
    if scope.only_replacements:
        raise SqlError(
            f"column '{node.name}' must appear in GROUP BY or be used in an aggregate function",
            span_of(node),
        )
    return Col(hit[1], hit[0])


# A number literal's text; `1.5e`, `.` and `1.2.3` are what a mangled statement leaves.
_NUMBER_TEXT = re.compile(r"([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


def _bind_literal(node: exp.Literal, scope: ScalarScope) -> Scalar:
    text = node.this
    if node.is_string:
        return Lit(STRING, text)
    if not _NUMBER_TEXT.fullmatch(text):
        raise SqlError(f"syntax error: '{text}' is not a number", span_of(node))
    if any(c in text for c in "eE"):
        return Lit(DOUBLE, float(text))
    if "." in text:
        if scope.semantics.sqlite_storage:
            return Lit(DOUBLE, float(text))
        value = dec.Decimal(text)
        digits = value.as_tuple()
        scale = max(-int(digits.exponent), 0)
        precision = max(len(digits.digits), scale)
        return Lit(checked_decimal(precision, scale, span_of(node)), value)
    value_int = int(text)
    if -(2**31) <= value_int < 2**31 and not scope.semantics.sqlite_storage:
        return Lit(INT, value_int)
    if -(2**63) <= value_int < 2**63:
        return Lit(BIGINT, value_int)
    if scope.semantics.sqlite_storage:
        return Lit(decimal(min(len(text), 38), 0), dec.Decimal(text))
    return Lit(checked_decimal(len(text.lstrip("0")), 0, span_of(node)), dec.Decimal(text))


def _bind_null(node: exp.Null, scope: ScalarScope) -> Scalar:
    return Lit(NULL, None)


def _bind_boolean(node: exp.Boolean, scope: ScalarScope) -> Scalar:
    return Lit(BOOLEAN, bool(node.this))


def _bind_paren(node: exp.Paren, scope: ScalarScope) -> Scalar:
    return bind_scalar(node.this, scope)


def _args(node: exp.Expression | exp.Binary, scope: ScalarScope) -> tuple[Scalar, Scalar]:
    return bind_scalar(node.this, scope), bind_scalar(node.expression, scope)


_ARITH = {exp.Add: ("+", "add"), exp.Sub: ("-", "sub"), exp.Mul: ("*", "mul")}


def _operand_type(x: Scalar, other: Scalar) -> SqlType:
    """Spark types an integer literal beside a decimal as DECIMAL(digits, 0), not as
    DECIMAL(10, 0): `d / 3` on DECIMAL(6,3) is DECIMAL(9,6), not DECIMAL(19,14)."""
    if isinstance(x, Lit) and x.type.is_integer and isinstance(x.value, int) and other.type.is_decimal:
        return decimal(max(len(str(abs(x.value))), 1), 0)
    return x.type


def _bind_arith(node: exp.Binary, scope: ScalarScope) -> Scalar:
    symbol, fn = _ARITH[type(node)]
    if fn in ("add", "sub") and isinstance(node.expression, exp.Interval):
        return interval_arithmetic(bind_scalar(node.this, scope), node.expression, negate=fn == "sub")
    if fn == "add" and isinstance(node.this, exp.Interval):
        return interval_arithmetic(bind_scalar(node.expression, scope), node.this, negate=False)
    a, b = _args(node, scope)
    temporal = [x for x in (a, b) if x.type.is_temporal]
    if temporal:
        other = b if temporal[0] is a else a
        if fn in ("add", "sub") and a.type == DATE and other.type.is_integer and other.type.kind != "BIGINT":
            # Spark: date ± n is date_add(date, ±n)
            n = coerce(b, INT) if fn == "add" else Call(INT, "neg", (coerce(b, INT),))
            return Call(DATE, "date_add_days", (a, n))
        if fn == "add" and b.type == DATE and a.type.is_integer and a.type.kind != "BIGINT":
            return Call(DATE, "date_add_days", (b, coerce(a, INT)))
        if fn in ("add", "sub") and (other.type.is_integer or other.type.is_temporal):
            raise UnsupportedSql(
                f"'{symbol}' on {a.type} and {b.type} is not supported; use DATEDIFF, DATE_ADD or an INTERVAL",
                span_of(node),
            )
        raise SqlError(f"cannot apply '{symbol}' to {a.type} and {b.type} in '{_short(node, scope)}'", span_of(node))
    _refuse_string_number(a, b, node, scope)
    t = arithmetic_type(symbol, _operand_type(a, b), _operand_type(b, a), scope.semantics)
    return Call(t, fn, _operands(a, b, t))


def _operands(a: Scalar, b: Scalar, t: SqlType) -> tuple[Scalar, Scalar]:
    """The operands of an arithmetic operator whose result has type `t`.

    A DECIMAL result is computed from the operands' exact values and then rounded to
    `t` (Spark): casting an operand to `t` first would round it to t's scale (DECIMAL(38,18)
    products have scale 6) or overflow t's integral digits (a large divisor)."""
    if not t.is_decimal:
        return coerce(a, t), coerce(b, t)
    return _exact_decimal(a, b, t), _exact_decimal(b, a, t)


def _exact_decimal(x: Scalar, other: Scalar, t: SqlType) -> Scalar:
    if x.type == NULL:
        return coerce(x, t)
    precision, scale = as_decimal(_operand_type(x, other))
    return coerce(x, decimal(precision, scale))


def _bind_div(node: exp.Div, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    _refuse_string_number(a, b, node, scope)
    sem = scope.semantics
    if sem.decimal_division == "refuse" and (a.type.is_decimal or b.type.is_decimal):
        raise UnsupportedSql(
            f"'/' on DECIMAL operands is not supported under --dialect {sem.dialect} "
            "(its NUMERIC quotient scale); CAST an operand to DOUBLE",
            span_of(node),
        )
    t = arithmetic_type("/", _operand_type(a, b), _operand_type(b, a), sem)
    if sem.division_by_zero == "ieee":
        return Call(t, "ieee_div", (coerce(a, t), coerce(b, t)))  # DuckDB: 1 / 0 is Infinity
    # Integer operands of a truncating dialect divide like `div` (PostgreSQL: 7 / 2 = 3).
    if sem.division_by_zero == "null":
        # SQLite: integer operands divide with truncation; any divisor 0 gives NULL.
        fn = "int_div_or_null" if t.is_integer else "div_or_null"
        return Call(t, fn, _operands(a, b, t))
    # Spark 4 in ANSI mode raises on a zero divisor (sqlglot's safe=True is Spark 3's rule).
    return Call(t, "int_div" if t.is_integer else "div", _operands(a, b, t))


def _bind_int_div(node: exp.IntDiv, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    if not (a.type.is_integer or a.type == NULL) or not (b.type.is_integer or b.type == NULL):
        raise UnsupportedSql("DIV is supported on integer operands only", span_of(node))
    fn = "int_div_or_null" if scope.semantics.remainder_by_zero == "null" else "int_div"
    return Call(BIGINT, fn, (coerce(a, BIGINT), coerce(b, BIGINT)))


_BITWISE: dict[type[exp.Expression], str] = {
    exp.BitwiseAnd: "bit_and",
    exp.BitwiseOr: "bit_or",
    exp.BitwiseXor: "bit_xor",
    exp.BitwiseNot: "bit_not",
}


def _bind_bitwise(node: exp.Expression, scope: ScalarScope) -> Scalar:
    """`a & b`, `a | b`, `a ^ b`, `~a`: integer operands (Spark refuses others), both
    widened to the wider one's type, which is the result's."""
    args = [bind_scalar(n, scope) for n in (node.this, node.expression) if n is not None]
    kinds = [a.type for a in args if a.type != NULL]
    bad = next((t for t in kinds if not t.is_integer), None)
    if bad is not None and scope.semantics.sqlite_storage:  # SQLite converts them: not done here
        raise UnsupportedSql(f"a bitwise operator on a {bad} operand is not supported", span_of(node))
    if bad is not None:
        raise SqlError(f"a bitwise operator needs integer operands, not {bad}", span_of(node))
    t = kinds[0] if kinds else INT
    for other in kinds[1:]:
        t = common_type(t, other, scope.semantics.string_number)
    return Call(t, _BITWISE[type(node)], tuple(coerce(a, t) for a in args))


def _bind_bit_count(node: exp.BitwiseCount, scope: ScalarScope) -> Scalar:
    """bit_count(x): the bits set in x as a BIGINT (Spark widens first: bit_count(-1) is
    64 for every integer kind), or 1 / 0 for a BOOLEAN."""
    arg = bind_scalar(node.this, scope)
    if not (arg.type.is_integer or arg.type.kind in ("BOOLEAN", "NULL")):
        raise SqlError(f"BIT_COUNT needs an integer or a BOOLEAN, not {arg.type}", span_of(node))
    return Call(INT, "bit_count", (coerce(arg, BIGINT),))


def _bind_mod(node: exp.Mod, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    _refuse_string_number(a, b, node, scope)
    t = arithmetic_type("%", _operand_type(a, b), _operand_type(b, a), scope.semantics)
    fn = "mod_or_null" if scope.semantics.remainder_by_zero == "null" else "mod"
    if scope.semantics.sqlite_storage and not t.is_integer:
        return Call(BIGINT, fn, (coerce(a, BIGINT), coerce(b, BIGINT)))  # SQLite's % works on INTEGERs
    # The remainder's type can be narrower than the operands' (Spark): compute on the
    # operands' exact values, then the result fits the remainder's type.
    return Call(t, fn, _operands(a, b, t))


def _refuse_outside_spark_math(node: exp.Expression, scope: ScalarScope) -> None:
    """Spark's mathematical functions only under Spark's rules (Semantics.spark_math)."""
    if not scope.semantics.spark_math:
        raise UnsupportedSql(
            f"function {written_name(node)}() is evaluated with Spark's rules only, not in --dialect "
            f"{scope.semantics.dialect}",
            span_of(node),
        )


def _bind_pmod(node: exp.Anonymous, scope: ScalarScope) -> Scalar:
    """pmod(a, n): the non-negative remainder for a positive n, typed as `a % n`."""
    if len(node.expressions) != 2:
        raise UnsupportedSql(f"PMOD() takes 2 arguments, not {len(node.expressions)}", span_of(node))
    _refuse_outside_spark_math(node, scope)
    a, b = (bind_scalar(e, scope) for e in node.expressions)
    _refuse_string_number(a, b, node, scope)
    t = arithmetic_type("%", _operand_type(a, b), _operand_type(b, a), scope.semantics)
    return Call(t, "pmod", _operands(a, b, t))


def _bind_neg(node: exp.Neg, scope: ScalarScope) -> Scalar:
    a = bind_scalar(node.this, scope)
    # Spark's grammar reads `-10` as one literal but `-(10)` as a minus applied to one: an
    # INT, so `d + -(10)` is a DECIMAL(14,3) for a DECIMAL(10,3) d where `d + -10` is (11,3)
    applied = isinstance(node.this, exp.Paren) and scope.semantics.spark_names
    if (
        isinstance(a, Lit)
        and isinstance(a.value, (int, float, dec.Decimal))
        and not isinstance(a.value, bool)
        and not applied
    ):
        # a negative decimal literal is exact in Spark (copy_negate: `-` would round to the
        # default context's 28 digits)
        value = a.value.copy_negate() if isinstance(a.value, dec.Decimal) else -a.value
        if (
            a.type == BIGINT
            and isinstance(value, int)
            and -(2**31) <= value < 2**31
            and not scope.semantics.sqlite_storage
        ):
            return Lit(INT, value)
        if a.type.is_decimal and a.type.scale == 0 and value == -(2**63) and not scope.semantics.sqlite_storage:
            return Lit(BIGINT, -(2**63))  # Spark reads -9223372036854775808 as the least BIGINT
        return Lit(a.type, value)
    if a.type == NULL:
        return a
    if not a.type.is_numeric:
        raise SqlError(f"cannot negate a {a.type}", span_of(node))
    return Call(a.type, "neg", (a,))


_COMPARE = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}


def _compare(fn: str, a: Scalar, b: Scalar, string_number: str = "spark") -> Scalar:
    a, b = _char_padded(a, b), _char_padded(b, a)
    # Compare a column with a constant in the column's own type when the constant
    # converts exactly (Spark's unwrap-cast rule): `amount >= 100`, not a widened cast.
    for column, const in ((a, b), (b, a)):
        if isinstance(const, Lit) and not isinstance(column, Lit) and column.type.is_numeric:
            exact = _exact_literal(const, column.type)
            if exact is not None:
                pair = (column, exact) if column is a else (exact, column)
                return Call(BOOLEAN, fn, pair)
    t = common_type(a.type, b.type, string_number)
    return Call(BOOLEAN, fn, (coerce(a, t), coerce(b, t)))


def _char_padded(x: Scalar, other: Scalar) -> Scalar:
    """A string literal compared with a CHAR(n) column is padded to n (Spark's
    ApplyCharTypePadding), so `c = 'ab'` holds for a CHAR(3) holding 'ab '."""
    n = other.type.length
    if other.type.fixed and n is not None and isinstance(x, Lit) and isinstance(x.value, str) and len(x.value) < n:
        return Lit(STRING, x.value.ljust(n))
    return x


def _exact_literal(lit: Lit, t: SqlType) -> Lit | None:
    if lit.value is None or isinstance(lit.value, bool) or not lit.type.is_numeric:
        return None
    try:
        converted = coerce(lit, t)
    except TypeMismatch:
        return None
    if not isinstance(converted, Lit) or converted.value is None:
        return None
    if t.kind == "FLOAT":  # the column holds float32: 1.1 is not exactly a FLOAT (Spark then widens)
        try:
            held = dec.Decimal(struct.unpack("f", struct.pack("f", float(converted.value)))[0])
        except OverflowError:
            return None
        return converted if held == dec.Decimal(lit.value if isinstance(lit.value, float) else str(lit.value)) else None
    same = dec.Decimal(str(converted.value)) == dec.Decimal(str(lit.value))
    return converted if same else None


def _refuse_string_number(a: Scalar, b: Scalar, node: exp.Expression | exp.Binary, scope: ScalarScope) -> None:
    """Dialects without Spark's STRING-to-DOUBLE coercion get a compile error, not Spark's answer."""
    if scope.semantics.string_number != "refuse":
        return
    if (a.type == STRING and b.type.is_numeric) or (b.type == STRING and a.type.is_numeric):
        raise UnsupportedSql(
            f"STRING and number mixed in '{_short(node, scope)}' have no implicit conversion under "
            f"--dialect {scope.semantics.dialect}; write a CAST",
            span_of(node),
        )


def _bind_compare(node: exp.Binary, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    _refuse_string_number(a, b, node, scope)
    return _compare(_COMPARE[type(node)], a, b, scope.semantics.string_number)


def _bind_null_safe(node: exp.Binary, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    eq = _compare("null_safe_eq", a, b)
    return eq if isinstance(node, exp.NullSafeEQ) else Call(BOOLEAN, "not", (eq,))


def _bind_equal_null(node: exp.EqualNull, scope: ScalarScope) -> Scalar:
    """equal_null(a, b) is a <=> b (Spark)."""
    return _compare("null_safe_eq", *_args(node, scope))


def _bind_typeof(node: exp.Typeof, scope: ScalarScope) -> Scalar:
    """typeof(x): the argument's type as Spark's catalog string, a constant (x is not
    evaluated, so it raises nothing)."""
    return Lit(STRING, catalog_string(bind_scalar(node.this, scope).type))


def catalog_string(t: SqlType) -> str:
    """A type as Spark's `DataType.catalogString` spells it (a CHAR or VARCHAR is a string)."""
    if t.element is not None:
        return f"array<{catalog_string(t.element)}>"
    if t.kind == "DECIMAL":
        return f"decimal({t.precision},{t.scale})"
    return {"INT": "int", "NULL": "void"}.get(t.kind, t.kind.lower())


def _boolean(expr: Scalar, node: exp.Expression) -> Scalar:
    if expr.type == NULL:
        return Lit(BOOLEAN, None)
    if expr.type != BOOLEAN:
        raise SqlError(f"expected a BOOLEAN, got {expr.type}", span_of(node))
    return expr


def _bind_logic(node: exp.Connector, scope: ScalarScope) -> Scalar:
    fn = "and" if isinstance(node, exp.And) else "or"
    parts: list[Scalar] = []
    for side in (node.this, node.expression):
        b = _boolean(bind_scalar(side, scope), side)
        # flatten nested AND/OR so the IR reads like the SQL
        parts.extend(b.args if isinstance(b, Call) and b.fn == fn else (b,))
    return Call(BOOLEAN, fn, tuple(parts))


def _bind_not(node: exp.Not, scope: ScalarScope) -> Scalar:
    inner = node.this
    if isinstance(inner, exp.Is):
        is_ = _bind_is(inner, scope)
        assert isinstance(is_, Call)
        negated = {"is_null": "is_not_null", "is_not_null": "is_null"}.get(is_.fn)
        if negated:
            return Call(BOOLEAN, negated, is_.args)
    return Call(BOOLEAN, "not", (_boolean(bind_scalar(inner, scope), inner),))


def _bind_is(node: exp.Is, scope: ScalarScope) -> Scalar:
    a = bind_scalar(node.this, scope)
    rhs = node.expression
    if isinstance(rhs, exp.Null):
        return Call(BOOLEAN, "is_null", (a,))
    if isinstance(rhs, exp.Boolean):
        return Call(BOOLEAN, "is_true" if rhs.this else "is_false", (_boolean(a, node.this),))
    # SQLite's `a IS b` is the null-safe equality
    return _compare("null_safe_eq", a, bind_scalar(rhs, scope))


def _bind_case(node: exp.Case, scope: ScalarScope) -> Scalar:
    subject = bind_scalar(node.this, scope) if node.this else None
    conds: list[Scalar] = []
    values: list[Scalar] = []
    for when in node.args.get("ifs") or []:
        cond = bind_scalar(when.this, scope)
        if subject is None:
            conds.append(_boolean(cond, when.this))
        elif _always_null(cond):
            # `x = NULL` (typed as any comparison) is never true: the branch cannot be taken,
            # and x is not evaluated for it, as Spark's optimizer drops it (x's errors, or
            # SQLite's bare column differing within its group, do not fire there)
            _compare("eq", subject, cond)
            conds.append(Lit(BOOLEAN, None))
        else:
            conds.append(_compare("eq", subject, cond))
        values.append(bind_scalar(when.args["true"], scope))
    default = node.args.get("default")
    values.append(bind_scalar(default, scope) if default is not None else Lit(NULL, None))
    if scope.semantics.sqlite_storage:
        _refuse_mixed_sqlite_types("CASE", values, node)
    return _case(conds, values, scope.semantics.string_number)


def _case(conds: list[Scalar], values: list[Scalar], string_number: str = "spark") -> Scalar:
    t = values[0].type
    for v in values[1:]:
        t = common_type(t, v.type, string_number)
    args: list[Scalar] = []
    for c, v in zip(conds, values[:-1], strict=True):
        args += [c, coerce(v, t)]
    args.append(coerce(values[-1], t))
    return Call(t, "case", tuple(args))


def _bind_if(node: exp.If, scope: ScalarScope) -> Scalar:
    cond = _boolean(bind_scalar(node.this, scope), node.this)
    false = node.args.get("false")
    values = [bind_scalar(node.args["true"], scope), bind_scalar(false, scope) if false else Lit(NULL, None)]
    if scope.semantics.sqlite_storage:
        _refuse_mixed_sqlite_types("IIF", values, node)
    return _case([cond], values, scope.semantics.string_number)


def _bind_nvl2(node: exp.Nvl2, scope: ScalarScope) -> Scalar:
    """nvl2(a, b, c) is Spark's IF(a IS NOT NULL, b, c), typed as IF."""
    a = bind_scalar(node.this, scope)
    values = [bind_scalar(node.args["true"], scope), bind_scalar(node.args["false"], scope)]
    return _case([Call(BOOLEAN, "is_not_null", (a,))], values, scope.semantics.string_number)


def _bind_null_test(node: exp.Anonymous, scope: ScalarScope) -> Scalar:
    """isnull(x) and isnotnull(x): x IS [NOT] NULL."""
    name = node.name.lower()
    if len(node.expressions) != 1:
        raise SqlError(f"{name.upper()} takes one argument, not {len(node.expressions)}", span_of(node))
    fn = "is_null" if name == "isnull" else "is_not_null"
    return Call(BOOLEAN, fn, (bind_scalar(node.expressions[0], scope),))


def _variadic(fn: str, items: list[Scalar], string_number: str = "spark") -> Scalar:
    t = items[0].type
    for v in items[1:]:
        t = common_type(t, v.type, string_number)
    return Call(t, fn, tuple(coerce(v, t) for v in items))


def _bind_coalesce(node: exp.Coalesce, scope: ScalarScope) -> Scalar:
    items = [bind_scalar(node.this, scope)] + [bind_scalar(e, scope) for e in node.expressions]
    if scope.semantics.sqlite_storage:
        items = _sqlite_coalesce_items(node, items)
        if len(items) == 1:
            return items[0]
    return _variadic("coalesce", items, scope.semantics.string_number)


def _always_null(e: Scalar) -> bool:
    """NULL on every row: a NULL literal, or a cast (`CAST(NULL AS INTEGER)`, TRY_CAST too)
    or a NULL-intolerant call over one."""
    if isinstance(e, Lit):
        return e.value is None
    if isinstance(e, Call) and e.fn == "error_if":  # a check that cannot fire around a NULL
        return all(map(_always_null, e.args[:2]))
    return isinstance(e, Call) and (e.fn in _CASTS or e.fn in _NULL_INTOLERANT) and any(map(_always_null, e.args))


def _sqlite_coalesce_items(node: exp.Coalesce, items: list[Scalar]) -> list[Scalar]:
    """SQLite's values carry their own type, so COALESCE's result has the type of the value
    chosen. Arguments that are always NULL are dropped and a constant first argument is the
    result; INTEGER beside REAL arguments are refused, as no one static type is right (the
    INTEGER 43 / -60 is 0, the REAL 43.0 / -60 is -0.72)."""
    kept = [e for e in items if not _always_null(e)] or items[-1:]
    if isinstance(kept[0], Lit):
        return kept[:1]
    _refuse_mixed_sqlite_types("COALESCE", kept, node)
    return kept


def _refuse_mixed_sqlite_types(what: str, values: list[Scalar], node: exp.Expression) -> None:
    """A result that is INTEGER on some rows and REAL on others has no static type."""
    values = [v for v in values if not _always_null(v)]
    if any(v.type.is_integer for v in values) and any(v.type.is_float for v in values):
        raise UnsupportedSql(
            f"{what} of INTEGER and REAL values under SQLite semantics (its type is the chosen value's)",
            span_of(node),
        )


def _bind_greatest(node: exp.Func, scope: ScalarScope) -> Scalar:
    items = [bind_scalar(node.this, scope)] + [bind_scalar(e, scope) for e in node.expressions]
    return _variadic("greatest" if isinstance(node, exp.Greatest) else "least", items, scope.semantics.string_number)


def _bind_nullif(node: exp.Nullif, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    t = common_type(a.type, b.type, scope.semantics.string_number)
    return Call(a.type, "nullif", (a, coerce(b, t) if t == a.type else b))


def _bind_cast(node: exp.Cast, scope: ScalarScope) -> Scalar:
    target = sql_type(node.to, scope.semantics)
    if target.length is not None:
        target = STRING  # Spark casts to CHAR(n)/VARCHAR(n) as to STRING
    inner = bind_scalar(node.this, scope)
    folded = _fold_cast(inner, target)
    if folded is not None:
        return folded
    if inner.type == target:
        return inner
    if not castable(inner.type, target):
        raise SqlError(f"cannot cast {inner.type} to {target}", span_of(node))
    # sqlglot parses Spark's CAST as TryCast; Spark 4 (ANSI) raises on bad input, so
    # only an explicit TRY_CAST gives NULL.
    explicit_try = isinstance(node, exp.TryCast) and node.sql("spark").upper().startswith("TRY_CAST")
    return Call(target, "try_cast" if explicit_try else "cast", (inner,))


def _fold_cast(inner: Scalar, target: SqlType) -> Scalar | None:
    """Constant-fold casts of string literals to dates, timestamps and decimals."""
    if not isinstance(inner, Lit) or not isinstance(inner.value, str):
        return None
    try:
        if target == DATE:
            return Lit(DATE, dt.date.fromisoformat(inner.value.strip()))
        if target == TIMESTAMP:
            return Lit(TIMESTAMP, dt.datetime.fromisoformat(inner.value.strip()))
        if target == TIMESTAMP_NTZ:  # Spark ignores a zone written in the text
            return Lit(TIMESTAMP_NTZ, dt.datetime.fromisoformat(inner.value.strip()).replace(tzinfo=None))
    except ValueError:
        return None
    return None


def _bind_in(node: exp.In, scope: ScalarScope) -> Scalar:
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise UnsupportedSql("IN (subquery) is not supported yet", span_of(node))
    a = bind_scalar(node.this, scope)
    if not node.expressions:
        if not scope.semantics.empty_in_list:
            raise SqlError("IN predicate requires at least one value; use FALSE for an empty list", span_of(node))
        return Lit(BOOLEAN, False)
    items = [bind_scalar(e, scope) for e in node.expressions]
    for item in items:
        _refuse_string_number(a, item, node, scope)
    eqs = [_compare("eq", a, item, scope.semantics.string_number) for item in items]
    if len(eqs) == 1:
        return eqs[0]
    # x IN (a, b) is x = a OR x = b, which gives SQL's NULL rules for free
    return Call(BOOLEAN, "or", tuple(_as_listed(eq) for eq in eqs))


def _as_listed(eq: Scalar) -> Scalar:
    """An equality of an IN list of two or more: Spark's optimizer compares a wall clock
    cast to an instant with an instant literal as wall clocks in a comparison (and a
    one-item IN), but not in a longer IN list (compiler/logical/time_zone.py). The literal
    is wrapped so that the time-zone pass leaves the comparison as the cast's."""
    if not (isinstance(eq, Call) and len(eq.args) == 2):
        return eq
    def crosses(x: Scalar) -> bool:  # a cast between a wall clock and an instant
        return isinstance(x, Call) and x.fn == "cast" and {x.type.kind, x.args[0].type.kind} == set(TIMESTAMP_KINDS)

    if not any(crosses(x) for x in eq.args):
        return eq
    return Call(eq.type, eq.fn, tuple(Call(x.type, "coalesce", (x,)) if isinstance(x, Lit) else x for x in eq.args))


def _bind_between(node: exp.Between, scope: ScalarScope) -> Scalar:
    a = bind_scalar(node.this, scope)
    low = bind_scalar(node.args["low"], scope)
    high = bind_scalar(node.args["high"], scope)
    for bound in (low, high):
        _refuse_string_number(a, bound, node, scope)
    rule = scope.semantics.string_number
    return Call(BOOLEAN, "and", (_compare("ge", a, low, rule), _compare("le", a, high, rule)))


def _bind_like(node: exp.Like | exp.ILike, scope: ScalarScope) -> Scalar:
    a, b = _args(node, scope)
    like = Call(BOOLEAN, "like", (coerce(a, STRING), coerce(b, STRING)))
    if isinstance(node, exp.ILike):  # Spark: lower(a) LIKE lower(b)
        pattern = like.args[1]
        if isinstance(pattern, Lit) and (pattern.value is None or str(pattern.value).isascii()):
            lowered: Scalar = Lit(STRING, None if pattern.value is None else str(pattern.value).lower())
        else:
            lowered = Call(STRING, "lower", (pattern,))
        like = Call(BOOLEAN, "like", (Call(STRING, "lower", like.args[:1]), lowered))
    # sqlglot keeps `x NOT LIKE p` as one Like node with negate=True
    return Call(BOOLEAN, "not", (like,)) if node.args.get("negate") else like


def _bind_concat(node: exp.Expression, scope: ScalarScope) -> Scalar:
    if isinstance(node, exp.DPipe):
        items = [bind_scalar(node.this, scope), bind_scalar(node.expression, scope)]
    else:
        items = [bind_scalar(e, scope) for e in node.expressions]
    return Call(STRING, "concat", tuple(coerce(i, STRING) for i in items))


def _unary_string(fn: str, result: SqlType) -> Callable[[exp.Expression, ScalarScope], Scalar]:
    def bind(node: exp.Expression, scope: ScalarScope) -> Scalar:
        return Call(result, fn, (coerce(bind_scalar(node.this, scope), STRING),))

    return bind


def _bind_trim(node: exp.Trim, scope: ScalarScope) -> Scalar:
    """TRIM/LTRIM/RTRIM of spaces, or of the characters given (a set):
    `TRIM([BOTH|LEADING|TRAILING] chars FROM s)`, and the two-argument calls in the order
    sqlglot reads for the dialect (Spark's `trim(chars, s)`)."""
    position = (node.args.get("position") or "").upper()
    s = coerce(bind_scalar(node.this, scope), STRING)
    chars = node.args.get("expression")
    if chars is not None:
        if scope.semantics.parse_only:  # sqlglot's argument order may not be Spark's here (Hive)
            raise UnsupportedSql(
                f"TRIM with explicit characters is not supported under --dialect {scope.dialect}", span_of(node)
            )
        fn = {"LEADING": "ltrim_chars", "TRAILING": "rtrim_chars"}.get(position, "btrim")
        return Call(STRING, fn, (s, coerce(bind_scalar(chars, scope), STRING)))
    fn = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
    return Call(STRING, fn, (s,))


def _bind_substring(node: exp.Substring, scope: ScalarScope) -> Scalar:
    args = [coerce(bind_scalar(node.this, scope), STRING), coerce(bind_scalar(node.args["start"], scope), INT)]
    if node.args.get("length") is not None:
        args.append(coerce(bind_scalar(node.args["length"], scope), INT))
    return Call(STRING, "substring", tuple(args))


def _bind_left_right(node: exp.Expression, scope: ScalarScope) -> Scalar:
    fn = "left" if isinstance(node, exp.Left) else "right"
    s = coerce(bind_scalar(node.this, scope), STRING)
    return Call(STRING, fn, (s, coerce(bind_scalar(node.expression, scope), INT)))


def _bind_numeric_unary(node: exp.Expression, scope: ScalarScope) -> Scalar:
    a = bind_scalar(node.this, scope)
    if not (a.type.is_numeric or a.type == NULL):
        raise SqlError(f"{type(node).__name__.upper()} needs a number, not {a.type}", span_of(node))
    if isinstance(node, exp.Abs):
        return Call(a.type, "abs", (a,))
    fn = "floor" if isinstance(node, exp.Floor) else "ceil"
    if node.args.get("decimals") is not None:
        raise UnsupportedSql(f"{fn.upper()} with a scale is not supported", span_of(node))
    if a.type.is_decimal:
        assert a.type.precision is not None and a.type.scale is not None
        t = decimal(a.type.precision - a.type.scale + 1, 0)
    else:
        t = BIGINT  # Spark: FLOOR/CEIL of integers and doubles are BIGINT
    return Call(t, fn, (a,))


def _bind_round(node: exp.Expression, scope: ScalarScope) -> Scalar:
    """ROUND (half away from zero) and BROUND (half to even), with Spark's result types."""
    if isinstance(node, exp.Anonymous):  # BROUND: sqlglot has no node of its own
        if not 1 <= len(node.expressions) <= 2:
            raise SqlError("BROUND takes one or two arguments", span_of(node))
        fn, this = "bround", node.expressions[0]
        digits = node.expressions[1] if len(node.expressions) == 2 else None
    else:
        fn, this, digits = "round", node.this, node.args.get("decimals")
    a = bind_scalar(this, scope)
    if not (a.type.is_numeric or a.type.kind == "NULL"):
        raise SqlError(f"{fn.upper()} needs a number, got {a.type}", span_of(this))
    if digits is None:
        d = 0
    else:
        bound = bind_scalar(digits, scope)
        if not isinstance(bound, Lit) or not isinstance(bound.value, int):
            raise UnsupportedSql(f"{fn.upper()} needs a constant integer scale", span_of(digits))
        d = bound.value
    t = a.type
    if t.is_decimal:
        assert t.precision is not None and t.scale is not None
        scale = max(min(d, t.scale), 0)
        t = decimal(t.precision - t.scale + scale + 1, scale)
    return Call(t, fn, (a, Lit(INT, d)))


def _bind_replace(node: exp.Expression, scope: ScalarScope) -> Scalar:
    args = [node.this, node.expression, node.args.get("replacement")]
    if args[2] is None:
        if scope.semantics.dialect in ("sqlite", "postgres", "duckdb"):
            raise UnsupportedSql("REPLACE needs three arguments", span_of(node))
        args[2] = exp.Literal.string("")  # Spark's replace(s, search) removes search
    return Call(STRING, "replace", tuple(coerce(bind_scalar(a, scope), STRING) for a in args))


_BINDERS: dict[type, Callable[..., Scalar]] = {
    exp.Column: _bind_column,
    exp.Literal: _bind_literal,
    exp.Null: _bind_null,
    exp.Boolean: _bind_boolean,
    exp.Paren: _bind_paren,
    exp.Add: _bind_arith,
    exp.Sub: _bind_arith,
    exp.Mul: _bind_arith,
    exp.Div: _bind_div,
    exp.IntDiv: _bind_int_div,
    exp.Mod: _bind_mod,
    **dict.fromkeys(_BITWISE, _bind_bitwise),
    exp.BitwiseCount: _bind_bit_count,
    exp.Neg: _bind_neg,
    exp.EQ: _bind_compare,
    exp.NEQ: _bind_compare,
    exp.LT: _bind_compare,
    exp.LTE: _bind_compare,
    exp.GT: _bind_compare,
    exp.GTE: _bind_compare,
    exp.NullSafeEQ: _bind_null_safe,
    exp.EqualNull: _bind_equal_null,
    exp.Typeof: _bind_typeof,
    exp.NullSafeNEQ: _bind_null_safe,
    exp.And: _bind_logic,
    exp.Or: _bind_logic,
    exp.Not: _bind_not,
    exp.Is: _bind_is,
    exp.Case: _bind_case,
    exp.If: _bind_if,
    exp.Coalesce: _bind_coalesce,
    exp.Nullif: _bind_nullif,
    exp.Greatest: _bind_greatest,
    exp.Least: _bind_greatest,
    exp.Cast: _bind_cast,
    exp.TryCast: _bind_cast,
    exp.In: _bind_in,
    exp.Between: _bind_between,
    exp.Like: _bind_like,
    exp.ILike: _bind_like,
    exp.Nvl2: _bind_nvl2,
    exp.DPipe: _bind_concat,
    exp.Concat: _bind_concat,
    exp.Upper: _unary_string("upper", STRING),
    exp.Lower: _unary_string("lower", STRING),
    exp.Length: _unary_string("length", INT),
    exp.Trim: _bind_trim,
    exp.Substring: _bind_substring,
    exp.Left: _bind_left_right,
    exp.Right: _bind_left_right,
    exp.Abs: _bind_numeric_unary,
    exp.Floor: _bind_numeric_unary,
    exp.Ceil: _bind_numeric_unary,
    exp.Round: _bind_round,
}
if hasattr(exp, "Replace"):
    _BINDERS[exp.Replace] = _bind_replace

# Functions sqlglot parses as Anonymous, by lower-case name.
_ANONYMOUS_BINDERS: dict[str, Callable[..., Scalar]] = {
    "bround": _bind_round,
    "pmod": _bind_pmod,
    "isnull": _bind_null_test,
    "isnotnull": _bind_null_test,
}
for _name, _rule in {**DATETIME_ANONYMOUS, **STRING_ANONYMOUS}.items():
    _ANONYMOUS_BINDERS[_name] = lambda node, scope, rule=_rule: rule(node, lambda n: bind_scalar(n, scope))

_FUNCTION_RULES = {**DATETIME_RULES, **STRING_RULES, **ARRAY_RULES, **MATH_RULES}
# Rules by name for functions sqlglot parses as Anonymous (bound like _FUNCTION_RULES).
_ANONYMOUS_RULES = dict(MATH_ANONYMOUS)
# The rules that compute with Spark's mathematical functions (refused in other dialects).
_MATH = frozenset((*MATH_RULES.values(), *MATH_ANONYMOUS.values()))

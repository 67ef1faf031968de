"""Spark's mathematical functions and TRY_ arithmetic at their edges, end to end
(sql_tests/math_functions.sql checks the common cases against Spark itself)."""

from __future__ import annotations

import pytest

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import RuntimeSqlError, SqlError, UnsupportedSql
from dbspc.runtime.script import run_script

TABLE = "CREATE TABLE t (id INT, x INT, b BIGINT, d DOUBLE, PRIMARY KEY (id));\n"


def _values(expr: str, rows: str) -> list[object]:
    """expr on each inserted row, by id."""
    run = run_script(TABLE + f"CREATE VIEW v AS SELECT id, {expr} AS r FROM t;\n-- step\nINSERT INTO t VALUES {rows};")
    return [row[1] for row, _ in sorted(run.outputs[0]["v"].to_rows())]


def test_pmod_wraps_like_java_when_r_plus_n_overflows() -> None:
    # Spark: pmod(-5, -2147483648) is 2147483643 (r + n wraps around in INT arithmetic)
    assert _values("pmod(x, -2147483648)", "(1, -5, 0, 0.0), (2, 7, 0, 0.0)") == [2147483643, 7]
    assert _values("pmod(b, -9223372036854775808)", "(1, 0, -5, 0.0)") == [9223372036854775803]
    assert _values("pmod(x, 3)", "(1, -7, 0, 0.0), (2, -2147483648, 0, 0.0)") == [2, 1]


def test_pmod_by_zero_raises_unless_guarded() -> None:
    with pytest.raises(RuntimeSqlError, match="division by zero"):
        _values("pmod(7, x)", "(1, 0, 0, 0.0)")
    assert _values("CASE WHEN x <> 0 THEN pmod(7, x) END", "(1, 0, 0, 0.0), (2, 3, 0, 0.0)") == [None, 1]


def test_try_arithmetic_nulls_its_own_errors_only() -> None:
    assert _values("try_add(x, 2147483647)", "(1, 1, 0, 0.0), (2, -1, 0, 0.0)") == [None, 2147483646]
    assert _values("try_multiply(b, 2)", "(1, 0, 9223372036854775807, 0.0)") == [None]
    assert _values("try_divide(x, 0)", "(1, 1, 0, 0.0)") == [None]
    assert _values("try_mod(x, x)", "(1, 0, 0, 0.0), (2, 7, 0, 0.0)") == [None, 0]
    with pytest.raises(RuntimeSqlError, match="division by zero"):  # the argument's error still raises
        _values("try_add(x / 0, 1)", "(1, 1, 0, 0.0)")


def test_shifts_are_javas() -> None:
    """The distance mod 32 (INT) or 64 (BIGINT), the bits shifted out dropped; answers
    as Spark 4 gave them (sql_tests/bitwise_shifts.sql checks more against Spark)."""
    assert _values("shiftleft(x, 31)", "(1, 1, 0, 0.0), (2, 3, 0, 0.0)") == [-2147483648, -2147483648]
    assert _values("x << 32", "(1, 1, 0, 0.0)") == [1]
    assert _values("shiftleft(x, -1)", "(1, 1, 0, 0.0)") == [-2147483648]
    assert _values("shiftright(x, 1)", "(1, -5, 0, 0.0)") == [-3]
    assert _values("shiftrightunsigned(x, 1)", "(1, -1, 0, 0.0)") == [2147483647]
    assert _values("shiftrightunsigned(b, 1)", "(1, 0, -1, 0.0)") == [9223372036854775807]
    assert _values("b << 63", "(1, 0, 3, 0.0)") == [-9223372036854775808]
    assert _values("b >> 64", "(1, 0, -8, 0.0)") == [-8]
    assert _values("shiftleft(x, NULL)", "(1, 1, 0, 0.0)") == [None]
    with pytest.raises(UnsupportedSql, match=r"shiftleft \(<<\) of a DOUBLE value"):
        compile_sql(TABLE + "CREATE VIEW v AS SELECT shiftleft(d, 1) AS r FROM t;")


def test_logarithms_are_null_at_and_below_their_asymptote() -> None:
    assert _values("ln(d)", "(1, 0, 0, 0.0), (2, 0, 0, -1.0), (3, 0, 0, 1.0)") == [None, None, 0.0]
    assert _values("log1p(d)", "(1, 0, 0, -1.0), (2, 0, 0, 0.0)") == [None, 0.0]
    assert _values("log(d, 8)", "(1, 0, 0, 0.0), (2, 0, 0, 2.0)") == [None, 3.0]


def test_floor_and_ceil_of_nan_are_zero() -> None:
    assert _values("floor(d)", "(1, 0, 0, CAST('NaN' AS DOUBLE))") == [0]
    assert _values("ceil(sqrt(d))", "(1, 0, 0, -1.0)") == [0]


def test_math_functions_are_refused_outside_spark_rules() -> None:
    with pytest.raises(UnsupportedSql, match=r"SQRT\(\) is evaluated with Spark's rules only"):
        compile_sql(TABLE + "CREATE VIEW v AS SELECT sqrt(d) AS r FROM t;", "sqlite")
    with pytest.raises(UnsupportedSql, match=r"PMOD\(\)"):
        compile_sql(TABLE + "CREATE VIEW v AS SELECT pmod(x, 2) AS r FROM t;", "postgres")


@pytest.mark.parametrize("expr", ["log10(x > 0)", "power(d, true)", "isnan(x = 1)", "sqrt(NOT (x > 0))"])
def test_a_boolean_is_no_number_to_a_math_function(expr: str) -> None:
    """Spark casts numbers and strings to DOUBLE for its mathematical functions, never a
    BOOLEAN (DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE)."""
    with pytest.raises(SqlError, match="cannot convert BOOLEAN to DOUBLE"):
        compile_sql(TABLE + f"CREATE VIEW v AS SELECT {expr} AS r FROM t;")


def test_double_remainder_is_exact_like_javas() -> None:
    # 10^17 is 1 more than a multiple of 3; a remainder computed through a rounded quotient says 0
    assert _values("d % 3", "(1, 0, 0, 1e17), (2, 0, 0, -7.5), (3, 0, 0, 1e-20)") == [1.0, -1.5, 1e-20]
    assert _values("pmod(d, 3)", "(1, 0, 0, -1e17)") == [2.0]


def test_dates_past_year_9999_are_rows_and_text() -> None:
    """Spark holds DATE and TIMESTAMP values past Python's years 1-9999; to_rows gives them
    as FarDate, printed as Spark prints them, and orders them with the others."""
    from dbspc.runtime.render import json_value
    from dbspc.runtime.zset import FarDate

    run = run_script(
        "CREATE TABLE t (d DATE, n INT);\nCREATE VIEW v AS SELECT date_add(d, n) AS far, "
        "CAST(date_add(d, n) AS TIMESTAMP) AS ts FROM t;\n-- step\n"
        "INSERT INTO t VALUES (DATE '2020-01-01', 3000000), (DATE '2020-01-01', 1), (DATE '0001-01-01', -366);"
    )
    rows = [row for row, _ in run.outputs[0]["v"].to_rows()]
    assert [json_value(v) for v in rows[0]] == ["0000-01-01", "0000-01-01 00:00:00"]  # year 0 is 1 BCE
    assert [json_value(v) for v in rows[1]] == ["2020-01-02", "2020-01-02 00:00:00"]
    assert [json_value(v) for v in rows[2]] == ["+10233-09-21", "+10233-09-21 00:00:00"]
    assert isinstance(rows[2][0], FarDate)

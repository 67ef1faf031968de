"""What `--dialect` means beyond parsing: one record of the evaluation rules per dialect.

sqlglot parses each dialect (and records some of its rules as `Dialect` flags such as
`SAFE_DIVISION` and `TYPED_DIVISION`); dbspc must also *evaluate* like the engine. A
`Semantics` names every rule in which the supported engines differ, and the binder picks
types and runtime functions from it, never from the dialect's name.

Dialects whose rules were checked against the engine evaluate by their own rules:
spark (Spark 4, ANSI mode on), databricks (Databricks SQL: Spark with ANSI_MODE, TRUE by
default since 2022; hive is Spark-family in syntax but not ANSI, so parse-only),
sqlite (the sqllogictest harness), postgres and duckdb (checked with the duckdb package).
Every other dialect is parsed with its own grammar but evaluated with Spark's rules;
`parse_only` marks them and `dbspc compile`/`run` say so on stderr.

Rules shared by every full dialect, so without a field: integer arithmetic raises on
overflow of the result type (SMALLINT + SMALLINT is a SMALLINT: Spark ANSI, PostgreSQL's
"smallint out of range", DuckDB's "Overflow in addition of INT16"), and NULL ordering has
no effect because a view is an unordered Z-set (ORDER BY in a view is ignored) and
MIN/MAX skip NULLs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from dbspc.compiler.errors import SqlError

DIALECTS = ("spark", "sqlite", "duckdb", "postgres", "databricks", "hive", "mysql", "trino", "bigquery", "snowflake")


@dataclass(frozen=True)
class Semantics:
    """The evaluation rules of one input dialect."""

    # The sqlglot dialect the input is parsed in and the user's expressions are printed in.
    dialect: str
    # `/` on two integers: "double" gives the true quotient as a DOUBLE (Spark, DuckDB);
    # "truncate" divides in the operands' integer type, truncating toward zero
    # (PostgreSQL 7 / 2 = 3, SQLite). sqlglot: `TYPED_DIVISION`.
    integer_division: Literal["double", "truncate"]
    # `/` with a zero divisor: "error" raises (Spark ANSI, PostgreSQL); "null" gives NULL
    # (SQLite, sqlglot's `SAFE_DIVISION`); "ieee" divides as doubles, 1/0 = Infinity,
    # 0/0 = NaN (DuckDB).
    division_by_zero: Literal["error", "null", "ieee"]
    # Integer division (Spark's `div`, DuckDB's `//`) and `%` with a zero divisor: "error"
    # raises (Spark ANSI, PostgreSQL, DuckDB); "null" gives NULL (SQLite).
    remainder_by_zero: Literal["error", "null"]
    # `/` with a DECIMAL operand: "decimal" uses Spark's DECIMAL(p, s) result rule;
    # "double" divides as DOUBLE (DuckDB); "refuse" rejects it at compile time
    # (PostgreSQL's NUMERIC quotient scale is not implemented).
    decimal_division: Literal["decimal", "double", "refuse"]
    # A STRING beside a number in arithmetic, a comparison, CASE/COALESCE or a set
    # operation: "spark" converts the string to BIGINT beside an integer (exactly, raising
    # on a malformed string) and to DOUBLE beside a DECIMAL or float (Spark 4 ANSI);
    # "double" converts both to DOUBLE (the sqllogictest harness's SQLite emulation);
    # "refuse" rejects it at compile time (DuckDB binds no implicit cast from VARCHAR to
    # a number; PostgreSQL's rules depend on whether the string is an untyped literal,
    # which is not implemented): the user writes a CAST.
    string_number: Literal["spark", "double", "refuse"]
    # SQLite's storage classes: every integer column, literal and result is a 64-bit
    # INTEGER, FLOAT is a double, a literal with a point is a REAL, and `%` works on
    # integers (operands truncated).
    sqlite_storage: bool = False
    # `x IN ()` is FALSE, even for a NULL x (SQLite); elsewhere an empty IN list is a
    # syntax error (Spark: INVALID_SQL_SYNTAX.EMPTY_IN_PREDICATE).
    empty_in_list: bool = False
    # INSERT and UPDATE values: "ansi" follows Spark's ANSI store assignment, which
    # converts between numbers (raising on overflow), from anything to STRING and between
    # DATE and TIMESTAMP, and refuses the rest ('12' into INT, 'yes' into BOOLEAN:
    # INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST); "cast" converts as CAST does
    # (SQLite's type affinity, PostgreSQL's untyped literals, DuckDB's implicit casts).
    store_assignment: Literal["ansi", "cast"] = "cast"
    # A column that is neither grouped nor aggregated in an aggregating query ("bare"):
    # False refuses it (Spark, PostgreSQL, DuckDB); True allows it as SQLite does, where it
    # takes the value of some row of the group. dbspc answers it only when that value is
    # the same for every row of the group, and otherwise raises at run time.
    bare_columns: bool = False
    # The dialect is parsed with its own grammar but evaluated with Spark's rules.
    parse_only: bool = False
    # An unaliased SELECT item is named as Spark names it (`sum(x)`, `(a + b)`, see
    # compiler/frontend/spark_names.py); otherwise `_col_<i>` by its position.
    spark_names: bool = False
    # Spark's grammar compares before it applies IN, BETWEEN and LIKE, and has no chain
    # of them: `a = b IN (c)` is `(a = b) IN (c)` (sqlglot parses `a = (b IN (c))`, as
    # PostgreSQL reads it), and `a LIKE b IN (c)` is a syntax error.
    spark_predicates: bool = False
    # Spark's mathematical functions (compiler/frontend/bind_math.py). The other full
    # dialects differ on their domains (PostgreSQL raises on sqrt(-1), SQLite returns
    # NULL), so there they are refused rather than answered with Spark's rules.
    spark_math: bool = False
    # Spark's optimizer evaluates a query's constant expressions when it plans it: one
    # that raises fails the query over any rows or none, so such a view is refused
    # (compiler/frontend/failing_constants.py). Other dialects raise per row.
    folds_constants: bool = False
    # Every operand of a function is evaluated, even after one that is NULL (DuckDB's
    # vectors, PostgreSQL's and SQLite's argument lists), so an operand's error raises on
    # such a row. Spark evaluates a NULL-intolerant operator's operands one at a time and
    # stops at the first NULL (BinaryExpression.eval), so `NULL + 1 / 0` is NULL there
    # (runtime/expressions.py: _Compiler.args).
    eager_operands: bool = False

    def parse_only_warning(self) -> str | None:
        """The stderr line that says a dialect is not evaluated by its own rules."""
        if not self.parse_only:
            return None
        return (
            f"warning: --dialect {self.dialect} is parsed as {self.dialect} but evaluated with Spark 4 "
            "(ANSI) rules for division, division by zero, overflow and type coercion"
        )


_SPARK = Semantics(
    dialect="spark",
    integer_division="double",
    division_by_zero="error",
    remainder_by_zero="error",
    decimal_division="decimal",
    string_number="spark",
    store_assignment="ansi",
    spark_names=True,
    spark_predicates=True,
    spark_math=True,
    folds_constants=True,
)

_FULL = {
    "spark": _SPARK,
    "databricks": Semantics(**{**_SPARK.__dict__, "dialect": "databricks"}),
    "sqlite": Semantics(
        dialect="sqlite",
        integer_division="truncate",
        division_by_zero="null",
        remainder_by_zero="null",
        decimal_division="decimal",
        string_number="double",
        sqlite_storage=True,
        empty_in_list=True,
        bare_columns=True,
        eager_operands=True,
    ),
    "postgres": Semantics(
        dialect="postgres",
        integer_division="truncate",
        division_by_zero="error",
        remainder_by_zero="error",
        decimal_division="refuse",
        string_number="refuse",
        eager_operands=True,
    ),
    "duckdb": Semantics(
        dialect="duckdb",
        integer_division="double",
        division_by_zero="ieee",
        remainder_by_zero="error",
        decimal_division="double",
        string_number="refuse",
        eager_operands=True,
    ),
}


@functools.cache
def semantics_of(dialect: str) -> Semantics:
    """The rules `--dialect` selects; an unknown name is a SqlError listing the choices."""
    if dialect not in DIALECTS:
        raise SqlError(f"unknown dialect '{dialect}'; choose one of {', '.join(DIALECTS)}")
    full = _FULL.get(dialect)
    if full is not None:
        return full
    # Hive is Spark's own SQL family: its programs run on Spark and get Spark's names.
    names = dialect == "hive"
    return Semantics(**{**_SPARK.__dict__, "dialect": dialect, "parse_only": True, "spark_names": names})

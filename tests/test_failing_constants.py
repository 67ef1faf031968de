"""Views whose constants raise when Spark folds them are refused where they are written.

Spark evaluates a query's constant expressions while it plans it, so a view with
`1 / 0` outside a conditional's branches fails in Spark over any rows or none; dbspc
refuses it at compile time instead of answering while no row reaches the constant
(tests/test_spark_oracle.py checks the same queries against Spark itself).
"""

from __future__ import annotations

import pytest

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import RuntimeSqlError, SqlError
from dbspc.compiler.frontend.program import compile_program
from dbspc.compiler.logical.constant_folding import folded_constants
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet

DDL = "CREATE TABLE t (k INT, s STRING);\nCREATE TABLE u (k INT, s STRING);\n"


def _refusal(query: str, dialect: str = "spark") -> SqlError | None:
    try:
        compile_sql(f"{DDL}CREATE VIEW v AS\n{query};", dialect)
    except SqlError as e:
        return e
    return None


@pytest.mark.parametrize(
    ("query", "col", "written", "error"),
    [
        ("SELECT k, 1 / 0 AS x FROM t", 11, "1 / 0", "division by zero"),
        ("SELECT k FROM t WHERE k > 0 AND 10 % 0 = 1", 33, "10 % 0 = 1", "division by zero"),
        ("SELECT k, make_date(2023, 2, 29) AS d FROM t", 11, "MAKE_DATE(2023, 2, 29)", "DATETIME_FIELD_OUT_OF_BOUNDS"),
        ("SELECT k, CAST('x1' AS INT) FROM t WHERE k > 5", 11, "CAST('x1' AS INT)", "invalid cast of 'x1'"),
        ("SELECT k, x FROM (SELECT k, 2147483647 + 1 AS x FROM t)", 29, "2147483647 + 1", "integer overflow"),
        ("SELECT t.k FROM t JOIN u ON t.k = u.k AND 1 / 0 = 1", 43, "1 / 0 = 1", "division by zero"),
        ("SELECT k, SUM(1 / 0) FROM t GROUP BY k", 15, "1 / 0", "division by zero"),
        ("SELECT k, NULLIF(1 / 0, 1) AS x FROM t", 11, "NULLIF(1 / 0, 1)", "division by zero"),
        ("SELECT 1 / 0 AS x", 8, "1 / 0", "division by zero"),
    ],
)
def test_a_failing_constant_is_refused_at_its_position(query: str, col: int, written: str, error: str) -> None:
    e = _refusal(query)
    assert e is not None and e.span is not None, query
    assert (e.span.line, e.span.col) == (4, col), e
    assert f"view 'v' fails in Spark whatever its rows: its constant {written} raises" in e.message, e
    assert error in e.message, e


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k FROM (SELECT k, 1 / 0 AS x FROM t)",  # an unread column: pruned first
        "SELECT k, CASE WHEN k > 0 THEN 1 / 0 END FROM t",  # a branch taken per row
        "SELECT k, CASE WHEN k = 1 THEN 1 WHEN 1 / 0 = 1 THEN 2 END FROM t",  # a later condition too
        "SELECT k, COALESCE(k, 1 / 0), IF(k > 0, 1, 1 / 0), nvl2(k, 1, 1 / 0) FROM t",
        "SELECT k, COALESCE(1, 1 / 0), true OR 1 / 0 = 1, 1 IN (1, 1 / 0) FROM t",  # evaluated lazily
        "SELECT k FROM t WHERE false AND 1 / 0 = 1",
        "SELECT k, COUNT(*) FROM t GROUP BY k, 1 / 0",  # a constant key is dropped
        "SELECT k, 1 / 0 FROM t ORDER BY k LIMIT 0",  # nothing is read
        "SELECT k, elt(3, 'a', 'b') FROM t",  # left to the rows by Spark 4
        "SELECT k, try_divide(1, 0), k + (5 - 2) FROM t",
    ],
)
def test_constants_spark_does_not_fold_or_that_do_not_raise_compile(query: str) -> None:
    assert _refusal(query) is None


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, x / 0 FROM (SELECT k, 1 AS x FROM t)",
        "SELECT k FROM (SELECT DISTINCT k, 0 AS x FROM t) WHERE 10 / x > 1",
        "SELECT a.k, make_date(year(a.d), 2, 29) FROM (SELECT k, DATE'2023-12-31' AS d FROM t) a JOIN u ON a.k = u.k",
    ],
)
def test_a_constant_column_is_put_in_place_where_it_is_read(query: str) -> None:
    """Spark carries a constant column up through projections, DISTINCT and inner joins
    (CollapseProject, FoldablePropagation) and folds it where it is read."""
    e = _refusal(query)
    assert e is not None and e.span is not None and (e.span.line, e.span.col) == (3, 13), query  # the view's name
    assert "an expression of constants in it raises" in e.message, e


def test_a_padding_null_is_not_carried_up() -> None:
    """An outer join's NULLs are constants of the plan but raise nowhere; nor does Spark
    carry a column of the padded side up."""
    assert _refusal("SELECT t.k, b.x / 0 FROM t LEFT JOIN (SELECT k, 1 AS x FROM u) b ON t.k = b.k") is None


def test_other_dialects_evaluate_constants_per_row() -> None:
    """SQLite's 1 / 0 is NULL; PostgreSQL's raises, on a row (dbspc does not model its planner)."""
    assert _refusal("SELECT k, 1 / 0 AS x FROM t", "sqlite") is None
    assert _refusal("SELECT k, 1 / 0 AS x FROM t", "postgres") is None
    pipeline = Pipeline(compile_sql(f"{DDL}CREATE VIEW v AS SELECT k, 1 / 0 AS x FROM t;", "postgres"))
    with pytest.raises(RuntimeSqlError, match="division by zero"):
        pipeline.step({"t": ZSet.from_rows([(1, "a")], pipeline.table_types("t"))})


def test_a_branch_that_raises_still_raises_on_the_rows_that_take_it() -> None:
    """Left to the rows, a conditional's failing branch rejects the step that reaches it."""
    pipeline = Pipeline.from_sql(f"{DDL}CREATE VIEW v AS SELECT k, CASE WHEN k > 0 THEN 1 / 0 END AS x FROM t;")
    types = pipeline.table_types("t")
    assert pipeline.step({"t": ZSet.from_rows([(0, "a")], types)})["v"].to_rows() == [((0, None), 1)]
    with pytest.raises(RuntimeSqlError, match="division by zero"):
        pipeline.step({"t": ZSet.from_rows([(1, "b")], types)})
    assert pipeline.table_contents("t").to_rows() == [((0, "a"), 1)]


def test_folded_constants_are_the_largest_outside_conditionals() -> None:
    # (an integer chain's constants are summed while binding, compiler/frontend/reassociate.py)
    program = compile_program(DDL + "CREATE VIEW v AS SELECT k + abs(2 - 5), CASE WHEN k > 0 THEN 4 - 1 END, 5 FROM t;")
    found = [str(c) for c in folded_constants([program.views["v"].plan])]
    assert found == ["abs((2 - 5))"]

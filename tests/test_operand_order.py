"""Which operands' errors can raise on a row: Spark's order of evaluation, and the
subexpressions its generated code computes ahead (runtime/spark_subexpressions.py).
The same cases run against Spark itself in tests/test_spark_oracle.py."""

from __future__ import annotations

import polars as pl
import pytest

from dbspc.compiler.circuit.dump import to_text
from dbspc.compiler.errors import RuntimeSqlError
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar
from dbspc.compiler.types import BOOLEAN, INT, STRING
from dbspc.runtime.expressions import evaluate
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.spark_subexpressions import evaluated_ahead
from dbspc.runtime.zset import ZSet

J, S = Col(INT, 0), Col(STRING, 1)
CAST_S = Call(INT, "cast", (S,))
# j is NULL and s is not a number: casting s raises
ROW = pl.DataFrame({"c0": [None], "c1": ["x"]}, schema={"c0": pl.Int32, "c1": pl.String})


def add(a: Scalar, b: Scalar) -> Call:
    return Call(INT, "add", (a, b))


def test_an_operand_after_a_null_one_is_not_evaluated_in_spark() -> None:
    assert evaluate(ROW, [add(J, CAST_S)], "v")["c0"].to_list() == [None]
    with pytest.raises(RuntimeSqlError, match="invalid cast"):
        evaluate(ROW, [add(CAST_S, J)], "v")  # the failing operand comes first


def test_an_eager_dialect_evaluates_every_operand() -> None:
    with pytest.raises(RuntimeSqlError):
        evaluate(ROW, [add(J, CAST_S)], "v", eager=True)


def test_a_division_reads_its_divisor_first() -> None:
    one = Lit(INT, 1)
    quotient = Call(INT, "int_div", (one, J))  # NULL where j is NULL
    assert evaluate(ROW, [Call(INT, "int_div", (CAST_S, J))], "v")["c0"].to_list() == [None]
    with pytest.raises(RuntimeSqlError):
        evaluate(ROW, [Call(INT, "int_div", (J, CAST_S))], "v")
    assert evaluate(ROW, [Call(INT, "int_div", (quotient, J))], "v")["c0"].to_list() == [None]


def test_a_subexpression_occurring_twice_is_evaluated_on_every_row() -> None:
    twice = [add(J, CAST_S), Call(INT, "mul", (J, CAST_S))]
    assert evaluated_ahead(tuple(twice)) == {CAST_S}
    with pytest.raises(RuntimeSqlError):
        evaluate(ROW, twice, "v")
    # one operator's expressions only: each alone answers
    for e in twice:
        assert evaluate(ROW, [e], "v")["c0"].to_list() == [None]


def test_occurrences_compare_as_spark_canonicalizes_them() -> None:
    a, b = Col(INT, 2), Col(INT, 3)
    assert evaluated_ahead((add(J, add(a, b)), add(add(b, a), Lit(INT, 1)))) == {add(a, b), add(b, a)}
    gt, lt = Call(BOOLEAN, "gt", (a, b)), Call(BOOLEAN, "lt", (b, a))
    assert evaluated_ahead((gt, lt)) == {gt, lt}
    # a chain is one multiset: (a + b) + J equals J + (b + a), and its parts are not counted again
    assert evaluated_ahead((add(add(a, b), J), add(J, add(b, a)))) == {add(add(a, b), J), add(J, add(b, a))}


def test_a_conditional_counts_what_it_always_evaluates_and_what_all_branches_share() -> None:
    cond = Call(BOOLEAN, "gt", (J, Lit(INT, 0)))
    in_branch = Call(INT, "case", (cond, CAST_S, Lit(INT, None)))
    assert evaluated_ahead((in_branch, add(J, CAST_S))) == frozenset()
    both_branches = Call(INT, "case", (cond, add(CAST_S, J), CAST_S))
    assert evaluated_ahead((both_branches, add(J, CAST_S))) == {CAST_S}
    first = Call(INT, "coalesce", (CAST_S, J))
    assert evaluated_ahead((first, add(J, CAST_S))) == {CAST_S}
    assert evaluated_ahead((Call(INT, "coalesce", (J, CAST_S)), add(J, CAST_S))) == frozenset()
    # AND and OR are no conditionals to Spark's count: both sides are counted
    ors = [Call(BOOLEAN, "or", (cond, Call(BOOLEAN, "eq", (J, CAST_S)))) for _ in range(2)]
    assert evaluated_ahead((Call(BOOLEAN, "and", tuple(ors)),)) != frozenset()


@pytest.mark.parametrize(("dialect", "raises"), [("spark", False), ("duckdb", True), ("postgres", True)])
def test_the_dialect_decides_through_the_circuit(dialect: str, raises: bool) -> None:
    p = Pipeline.from_sql(
        "CREATE TABLE t (j INT, s VARCHAR); CREATE VIEW v AS SELECT j + CAST(s AS INT) AS x FROM t;", dialect=dialect
    )
    batch = {"t": ZSet.from_rows([[None, "x"]], p.table_types("t"))}
    if raises:
        with pytest.raises(RuntimeSqlError):
            p.step(batch)
    else:
        assert p.step(batch)["v"].to_rows() == [((None,), 1)]


@pytest.mark.parametrize(
    ("view", "row"),
    [
        ("lpad(s, 2147483647, 'x')", ["ab", 1]),
        ("rpad(s, 2147483647, 'xy')", ["ab", 1]),
        ("repeat(s, n)", ["abc", 1073741824]),
    ],
)
def test_a_string_longer_than_spark_holds_raises_before_it_is_built(view: str, row: list[object]) -> None:
    """A result past Spark's largest array fails there; dbspc rejects the step rather than
    allocate gigabytes per row (it once let the kernel's OOM killer end the process)."""
    p = Pipeline.from_sql(f"CREATE TABLE t (s STRING, n INT); CREATE VIEW v AS SELECT {view} AS x FROM t;")
    with pytest.raises(RuntimeSqlError, match="longer than the longest string"):
        p.step({"t": ZSet.from_rows([row], p.table_types("t"))})
    assert p.table_contents("t").to_rows() == []
    # a NULL needs no room
    fits = {"t": ZSet.from_rows([[None, 5]], p.table_types("t"))}
    assert p.step(fits)["v"].to_rows() == [((None,), 1)]


def test_a_constant_whose_value_is_null_propagates_in_spark() -> None:
    """Spark folds `ln(-3.5)` to NULL while it plans, so the product is NULL without
    dividing, whichever side the constant is on; dbspc binds it as the NULL it is."""
    for x in ("(f % f) * ln(-3.5)", "ln(-3.5) * (f % f)"):
        p = Pipeline.from_sql(f"CREATE TABLE t (f DOUBLE); CREATE VIEW v AS SELECT {x} AS x FROM t;")
        assert "map[NULL::DOUBLE]" in to_text(p.circuit)
        assert p.step({"t": ZSet.from_rows([[0.0]], p.table_types("t"))})["v"].to_rows() == [((None,), 1)]


def test_an_integer_chain_adds_its_constants_last_in_spark() -> None:
    """Spark's ReorderAssociativeOperator: `i + 2147483647 + j` is `(i + j) + 2147483647`,
    which does not overflow for i = 1, j = -1; PostgreSQL adds left to right."""
    ddl = "CREATE TABLE t (i INT, j INT); CREATE VIEW v AS SELECT i + 2147483647 + j AS x FROM t;"
    spark = Pipeline.from_sql(ddl)
    assert "((#0 + #1) + 2147483647)" in to_text(spark.circuit)
    assert spark.step({"t": ZSet.from_rows([[1, -1]], spark.table_types("t"))})["v"].to_rows() == [((2147483647,), 1)]
    postgres = Pipeline.from_sql(ddl, dialect="postgres")
    with pytest.raises(RuntimeSqlError, match="overflow"):
        postgres.step({"t": ZSet.from_rows([[1, -1]], postgres.table_types("t"))})


@pytest.mark.parametrize(
    ("x", "value"),
    [
        ("try_add(1, 2)", 3),
        ("try_add(2147483647, 1)", None),
        ("try_divide(f, ln(-1.0))", None),
        ("try_add(i, 3 * 4)", 17),
    ],
)
def test_a_try_operator_over_folded_constants(x: str, value: object) -> None:
    """TRY_ADD and the rest bind their operator first, which Spark's dialects may fold to a
    constant (its constants, or a NULL operand): that constant is the answer, as Spark
    folds it, not a refusal (generated views found `try_add(...) is supported on numbers
    only, not INT`)."""
    p = Pipeline.from_sql(f"CREATE TABLE t (i INT, f DOUBLE); CREATE VIEW v AS SELECT {x} AS x FROM t;")
    assert p.step({"t": ZSet.from_rows([[5, 2.0]], p.table_types("t"))})["v"].to_rows() == [((value,), 1)]


def test_locate_reads_its_start_first_and_a_null_start_is_zero() -> None:
    """Spark's StringLocate evaluates the start, then the substring, then the string: a
    NULL start is 0 (after Hive) without evaluating the others, a NULL substring is NULL."""
    p = Pipeline.from_sql(
        "CREATE TABLE t (s STRING, n INT); "
        "CREATE VIEW v AS SELECT locate(s, 'abc', n) AS a, locate(CAST(CAST(s AS INT) AS STRING), 'x', n) AS b FROM t;"
    )
    rows = [["b", None], [None, None], [None, 1]]
    assert sorted(p.step({"t": ZSet.from_rows(rows, p.table_types("t"))})["v"].to_rows(), key=str) == [
        ((0, 0), 2),
        ((None, None), 1),
    ]
    with pytest.raises(RuntimeSqlError, match="invalid cast"):  # a start: the substring is cast
        p.step({"t": ZSet.from_rows([["b", 1]], p.table_types("t"))})


def test_a_try_division_by_zero_never_evaluates_its_dividend() -> None:
    """Spark's TRY mode of `/` and `%` reads the divisor first and is NULL for a zero one
    without reading the dividend, so a division by zero in the dividend does not raise."""
    p = Pipeline.from_sql(
        "CREATE TABLE t (i INT, d DECIMAL(10,3)); "
        "CREATE VIEW v AS SELECT try_divide(pmod(d, d), 0.000) AS a, try_divide(i div i, i) AS b, "
        "try_mod(i % i, i) AS c FROM t;"
    )
    assert p.step({"t": ZSet.from_rows([[0, 0]], p.table_types("t"))})["v"].to_rows() == [((None, None, None), 1)]
    q = Pipeline.from_sql("CREATE TABLE t (i INT); CREATE VIEW v AS SELECT try_divide(i div (i - 1), i) AS a FROM t;")
    with pytest.raises(RuntimeSqlError, match="division by zero"):  # a divisor: the dividend is read
        q.step({"t": ZSet.from_rows([[1]], q.table_types("t"))})

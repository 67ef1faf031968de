"""sqlglot's parser must not lose an argument Spark gives a meaning.

It did twice: `percentile(x, p, frequency)` became `percentile(x, p)`, and
`nth_value(x, n, true)` (skip NULLs) became a FROM FIRST flag; dbspc computed both
without them. Each call below is written with all its arguments; its re-generated Spark
SQL must keep as many, or be one of the known rewrites that mean the same. A call whose
argument is lost must be refused by dbspc (the last test)."""

from __future__ import annotations

import pytest
import sqlglot

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import DbspcError, UnsupportedSql
from dbspc.compiler.frontend.program import _argument_count

CALLS = [
    "substring(s, 1, 2)",
    "regexp_replace(s, 'a', 'b', 2)",
    "split(s, ',', 2)",
    "lpad(s, 5, 'x')",
    "rpad(s, 5, 'x')",
    "round(x, 2)",
    "bround(x, 1)",
    "date_format(d, 'yyyy')",
    "to_date(s, 'yyyy')",
    "to_timestamp(s, 'yyyy')",
    "try_to_timestamp(s, 'yyyy')",
    "locate('a', s, 2)",
    "concat_ws(',', a, b, c)",
    "nvl2(a, b, c)",
    "months_between(a, b, false)",
    "date_trunc('MONTH', d)",
    "trunc(d, 'MM')",
    "next_day(d, 'MO')",
    "from_unixtime(n, 'yyyy')",
    "unix_timestamp(s, 'yyyy')",
    "log(2, x)",
    "sort_array(a, false)",
    "translate(s, 'a', 'b')",
    "substring_index(s, '.', 2)",
    "btrim(s, 'x')",
    "lag(x, 1, 0)",
    "lead(x, 2, 0)",
    "ntile(2)",
    "nth_value(x, 2)",
    "percentile(x, 0.5)",
    "make_date(1, 2, 3)",
    "make_timestamp(1, 2, 3, 4, 5, 6)",
    "add_months(d, 1)",
    "date_add(d, 1)",
    "datediff(a, b)",
    "coalesce(a, b, c)",
    "greatest(a, b, c)",
    "if(a, b, c)",
    "listagg(s, ',')",
]
# rewrites that keep the meaning: the written argument is the default, or becomes syntax
SAME_MEANING = {
    "regexp_extract(s, 'a', 1)": "REGEXP_EXTRACT(s, 'a')",
    "first_value(x, true)": "FIRST_VALUE(x) IGNORE NULLS",
    "last(x, true)": "LAST(x) IGNORE NULLS",
}


def _arguments(call: str) -> int:
    return _argument_count(call, call.index("("))


def _spark_sql(call: str) -> str:
    return str(sqlglot.parse_one(f"SELECT {call}", read="spark").expressions[0].sql("spark"))


@pytest.mark.parametrize("call", CALLS)
def test_the_parse_keeps_every_argument(call: str) -> None:
    assert _arguments(_spark_sql(call)) == _arguments(call), _spark_sql(call)


@pytest.mark.parametrize(("call", "rewritten"), sorted(SAME_MEANING.items()))
def test_known_rewrites_mean_the_same(call: str, rewritten: str) -> None:
    assert _spark_sql(call) == rewritten


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("percentile(x, 0.5, n) AS p FROM t GROUP BY g", "with a frequency argument"),
        ("percentile(DISTINCT x, 0.5, n) AS p FROM t GROUP BY g", "with a frequency argument"),
        ("nth_value(x, 2, true) OVER (ORDER BY n) AS p FROM t", "ignoring NULLs"),
    ],
)
def test_a_lost_argument_is_refused(item: str, message: str) -> None:
    with pytest.raises(UnsupportedSql, match=message):
        compile_sql(f"CREATE TABLE t (g INT, x DOUBLE, n INT);\nCREATE VIEW v AS SELECT {item};")


@pytest.mark.parametrize(
    ("item", "message", "column"),
    [
        # sqlglot reads these without complaint, and dbspc failed inside its own code
        ("ceil() AS c FROM t", "too few arguments to CEIL()", None),
        ("nvl2(x, n) AS c FROM t", "too few arguments to NVL2()", 25),
        ("substr(g) AS c FROM t", "too few arguments to SUBSTR()", 25),
        ("date_diff() AS c FROM t", "too few arguments to DATE_DIFF()", 25),
        ("coalesce() AS c FROM t", "too few arguments to COALESCE()", None),
        # sqlglot's own builder fails on it
        ("map(x) AS c FROM t", "wrong number or kind of arguments to MAP()", 25),
        # read, but sqlglot cannot print it again
        ("next_value_for(x, x) OVER (ORDER BY n) AS c FROM t", "wrong number or kind of arguments to NEXT_VALUE_FOR()",
         25),
        # a subclass of an aggregate dbspc computes (percentile), but a function of its own
        ("percentile_approx(x, 0.5) AS p FROM t GROUP BY g", "function PERCENTILE_APPROX() is not supported yet", 25),
    ],
)
def test_a_call_with_wrong_arguments_is_a_positioned_error(item: str, message: str, column: int | None) -> None:
    with pytest.raises(DbspcError) as caught:
        compile_sql(f"CREATE TABLE t (g INT, x DOUBLE, n INT);\nCREATE VIEW v AS SELECT {item};")
    assert caught.value.message.endswith(message)
    assert caught.value.span is not None and caught.value.span.line == 2
    if column is not None:
        assert caught.value.span.col == column

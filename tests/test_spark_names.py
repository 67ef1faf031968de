"""Spark 4 names unaliased SELECT items as tests/test_view_names.py pins them (and so as
dbspc names them): `spark.sql("SELECT <item> FROM t").columns` on a table of the same
columns. They share the one local SparkSession of the `spark` fixture."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_view_names import SPARK_NAMES

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="module")
def names_table(spark: Any) -> Any:
    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW t AS SELECT * FROM VALUES "
        "(1, 2, 3, 4, CAST(5 AS BIGINT), 'a', CAST(1.5 AS DECIMAL(10,2)), CAST(2.5 AS DOUBLE), DATE '2020-01-01', "
        "TIMESTAMP '2020-01-01 00:00:00', true, array(1, 2), DATE '2020-02-01') "
        "AS t(x, y, a, b, amount, s, d, f, dt, ts, flag, arr, dt2)"
    )
    yield spark
    spark.sql("DROP VIEW IF EXISTS t")


def test_spark_names_as_pinned(names_table: Any) -> None:
    wrong = []
    for item, name in SPARK_NAMES:
        columns = names_table.sql(f"SELECT {item} FROM t").columns
        if columns != [name]:
            wrong.append(f"{item}: Spark {columns}, pinned {name!r}")
    assert not wrong, "\n".join(wrong)


def test_doubled_quotes_read_as_spark_reads_them(spark: Any) -> None:
    """The source text itself goes to Spark (the oracle's re-emitted SQL would agree either way)."""
    from dbspc.runtime.script import run_script

    items = "'it''s' AS a, '''' AS b, 'x''' AS c, '' AS d, 'p' 'q' AS e, 'o\\'k' AS f, \"say \"\"hi\"\"\" AS g"
    expected = tuple(spark.sql(f"SELECT {items}").collect()[0])
    run = run_script(
        f"CREATE TABLE t (k INT);\nCREATE VIEW v AS SELECT {items} FROM t;\n-- step\nINSERT INTO t VALUES (1);\n"
    )
    rows = run.outputs[0]["v"].to_rows()
    assert [tuple(r) for r, _ in rows] == [expected]


def test_view_columns_case_as_spark_shows_it(spark: Any) -> None:
    from tests.test_view_names import MIXED_CASE_VIEWS

    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW m AS SELECT * FROM VALUES "
        "(1, CAST(1.5 AS DECIMAL(10,2)), 'a', TIMESTAMP '2020-01-01 00:00:00') AS m(CustomerId, Amount, Region, At)"
    )
    try:
        wrong = [
            f"{q}: Spark {spark.sql(q).columns}, pinned {columns}"
            for q, columns in MIXED_CASE_VIEWS
            if spark.sql(q).columns != columns
        ]
    finally:
        spark.sql("DROP VIEW IF EXISTS m")
    assert not wrong, "\n".join(wrong)

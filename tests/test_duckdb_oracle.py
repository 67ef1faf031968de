"""The DuckDB oracle's translation of Spark SQL (runtime/oracle.py duckdb_sql): what it
must keep of ANSI Spark's semantics for the oracle to judge dbspc's answers and errors."""

from __future__ import annotations

import duckdb
import pytest

from dbspc.runtime.oracle import duckdb_sql


def test_a_cast_inside_a_cast_stays_a_cast() -> None:
    """sqlglot reads Spark's CAST as a TryCast; each is undone, however deep, so DuckDB
    raises where ANSI Spark does. An explicit TRY_CAST stays one."""
    sql = duckdb_sql(
        "SELECT CAST(CAST(n AS INT) AS DECIMAL(5,2)) AS c, CAST(CAST(CAST(n AS SMALLINT) AS INT) AS BIGINT) AS d,"
        " TRY_CAST(s AS INT) AS e FROM t",
        "spark",
    )
    assert "TRY_CAST" not in sql.replace("TRY_CAST(s AS INT)", "")
    con = duckdb.connect()
    con.execute("CREATE TABLE t (n BIGINT, s VARCHAR)")
    con.execute("INSERT INTO t VALUES (3000000000, 'x')")
    with pytest.raises(duckdb.ConversionException):
        con.execute(sql).fetchall()
    con.execute("DELETE FROM t")
    con.execute("INSERT INTO t VALUES (7, 'x')")
    assert con.execute(sql).fetchall() == [(7, 7, None)]

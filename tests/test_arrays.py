"""ARRAY values (collect_list / collect_set): types, refusals, report, Spark mapping."""

from __future__ import annotations

import pytest

from dbspc.compiler.circuit.report import to_report
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import UnsupportedSql
from dbspc.compiler.types import INT, STRING, array_of, decimal
from dbspc.runtime.refresh.schema import arrow_type, parse_type
from dbspc.runtime.render import json_value, text_value

TABLE = "CREATE TABLE t (g INT, x INT);\n"


def test_array_type_text_round_trips() -> None:
    for t in (array_of(INT), array_of(decimal(10, 2)), array_of(STRING)):
        assert parse_type(t.sql()) == t
    assert array_of(INT).sql() == "ARRAY<INT>"
    assert str(arrow_type(array_of(INT))) == "large_list<item: int32>"


def test_report_names_the_collect_state() -> None:
    compiled = compile_sql(TABLE + "CREATE VIEW v AS SELECT g, collect_list(x) AS xs FROM t GROUP BY g;\n")
    report = to_report(compiled.circuit)
    assert "value multiset per group (collect_list)" in report
    assert "elements of changed groups" in report


def test_array_agg_outside_spark_is_refused() -> None:
    """DuckDB's and PostgreSQL's ARRAY_AGG keep NULLs and give NULL on no rows."""
    with pytest.raises(UnsupportedSql, match="ARRAY_AGG in duckdb is not supported"):
        compile_sql(TABLE + "CREATE VIEW v AS SELECT g, array_agg(x) AS xs FROM t GROUP BY g;\n", dialect="duckdb")


def test_array_agg_in_spark_is_collect_list() -> None:
    compiled = compile_sql(TABLE + "CREATE VIEW v AS SELECT g, array_agg(x) AS xs FROM t GROUP BY g;\n")
    assert "collect_list" in to_report(compiled.circuit)


def test_arrays_render_like_spark() -> None:
    assert text_value([1, 2]) == "[1, 2]"
    assert text_value(["a", None]) == "[a, NULL]"
    assert json_value([1, None]) == [1, None]

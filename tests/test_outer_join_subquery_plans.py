"""Plan shapes of outer joins and subqueries: what the lowering promises beyond results
(those are checked against DuckDB and Spark by the goldens)."""

from __future__ import annotations

from collections import Counter

import pytest

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import UnsupportedSql

TABLES = "CREATE TABLE l (k INT, a STRING); CREATE TABLE r (k INT, b INT);\n"


def _kinds(view_sql: str) -> Counter[str]:
    circuit = compile_sql(TABLES + view_sql, incremental=False).circuit
    return Counter(circuit[n].kind for n in circuit.live())


def test_where_rejecting_nulls_of_the_padded_side_makes_an_inner_join() -> None:
    outer = _kinds("CREATE VIEW v AS SELECT l.a, r.b FROM l LEFT JOIN r ON l.k = r.k;")
    inner = _kinds("CREATE VIEW v AS SELECT l.a, r.b FROM l LEFT JOIN r ON l.k = r.k WHERE r.b > 5;")
    assert outer["negate"] == 1 and outer["distinct"] == 1
    assert inner["negate"] == 0 and inner["distinct"] == 0 and inner["join"] == 1


def test_is_null_on_the_padded_side_keeps_the_outer_join() -> None:
    kinds = _kinds("CREATE VIEW v AS SELECT l.a FROM l LEFT JOIN r ON l.k = r.k WHERE r.b IS NULL;")
    assert kinds["negate"] == 1


def test_in_subquery_probes_by_an_equi_join() -> None:
    """x IN (SELECT y ...) joins on x = y; only the uncorrelated EXISTS parts are crossed
    with the outer rows (one row each)."""
    circuit = compile_sql(
        TABLES + "CREATE VIEW v AS SELECT a FROM l WHERE k IN (SELECT k FROM r);", incremental=False
    ).circuit
    keyed = [circuit[n] for n in circuit.live() if circuit[n].kind == "join" and circuit[n].left_keys]
    assert keyed


def test_right_join_after_semi_join_is_refused() -> None:
    with pytest.raises(UnsupportedSql, match="RIGHT JOIN after a SEMI or ANTI join"):
        compile_sql(
            TABLES + "CREATE VIEW v AS SELECT l.a FROM l LEFT SEMI JOIN r ON l.k = r.k RIGHT JOIN r AS q ON q.k = l.k;"
        )

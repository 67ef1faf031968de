"""A GROUP BY expression or an aggregate used again above the aggregation is read from the
aggregate's output column: the binder looks each subexpression up by its printed SQL. Only
nodes that could print as long as some replacement are printed, so that a deep expression
binds in time linear in its size."""

from __future__ import annotations

import pytest

from dbspc.compiler.frontend import bind_scalar
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet

TABLE = "CREATE TABLE t (a INT, b INT, g INT);\n"


def _rows(view_sql: str, rows: list[tuple[int, int, int]]) -> list[tuple[object, ...]]:
    p = Pipeline.from_sql(TABLE + view_sql)
    z = ZSet.from_rows(rows, p.table_types("t"))
    out = p.step({"t": z})["v"]
    return sorted(tuple(r[:-1]) for r in out.frame.iter_rows() for _ in range(r[-1]))


def test_a_long_group_by_expression_is_still_found() -> None:
    # the key has many leaves (columns and literals): it must still be printed and found
    sql = "CREATE VIEW v AS SELECT (a + b) * 2 + g - 1 AS k, COUNT(*) AS n FROM t GROUP BY (a + b) * 2 + g - 1;"
    assert _rows(sql, [(1, 2, 3), (2, 1, 3), (0, 0, 1)]) == [(0, 1), (8, 2)]


def test_an_aggregate_inside_an_expression_is_found() -> None:
    sql = "CREATE VIEW v AS SELECT g, SUM(a) + MAX(b) * 10 AS s FROM t GROUP BY g;"
    assert _rows(sql, [(1, 2, 0), (3, 4, 0), (5, 6, 1)]) == [(0, 44), (1, 65)]


def test_a_deep_expression_prints_few_of_its_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[str] = []
    real = bind_scalar._printed

    def counting(node, dialect=None):  # type: ignore[no-untyped-def]
        text = real(node, dialect)
        printed.append(text)
        return text

    monkeypatch.setattr(bind_scalar, "_printed", counting)
    counts = []
    for depth in (50, 200):
        printed.clear()
        e = "g"
        for i in range(depth):
            e = f"({e} + {i})"
        rows = _rows(f"CREATE VIEW v AS SELECT {e} AS c, COUNT(*) AS n FROM t GROUP BY g;", [(0, 0, 1), (0, 0, 1)])
        assert rows == [(1 + depth * (depth - 1) // 2, 2)]
        counts.append(sum(map(len, printed)))
        # a replacement here prints in at most 8 characters: only nodes of at most 8
        # columns and literals are printed, near the leaves
        assert max(map(len, printed)) < 60
    # the characters printed grow with the depth (4x deeper, 4x more, plus the literals'
    # longer numbers), not with its square (16x, printing every node)
    assert counts[1] < 6 * counts[0]

"""Column pruning (compiler/logical/prune_columns.py): what no reader uses is not
computed, not carried and not kept, and equal parts of different views stay one."""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.compile import compile_sql
from dbspc.runtime.script import run_script

TABLES = "CREATE TABLE t (k INT, s STRING, n BIGINT);\nCREATE TABLE u (k INT, w INT);\n"
DERIVED = "(SELECT k, s, n, CAST(s AS INT) AS bad FROM t WHERE k > 0) x JOIN u ON x.k = u.k"


def _nodes(views: str, kind: type[op.Operator]) -> list[op.Operator]:
    circuit = compile_sql(TABLES + views).circuit
    return [n for n in circuit.nodes if isinstance(n, kind)]


def test_a_join_over_a_derived_table_keeps_only_what_is_read() -> None:
    integrals = _nodes(f"CREATE VIEW v AS SELECT x.k, u.w FROM {DERIVED};", op.Integrate)
    widths = sorted(len(n.types) for n in integrals)
    assert widths == [1, 2], widths  # the derived side keeps k alone; u, a table, is whole


def test_views_reading_other_columns_of_one_join_share_it() -> None:
    one = _nodes(f"CREATE VIEW a AS SELECT x.s FROM {DERIVED};", op.Join)
    two = _nodes(
        f"CREATE VIEW a AS SELECT x.s FROM {DERIVED};\nCREATE VIEW b AS SELECT x.n, u.w FROM {DERIVED};", op.Join
    )
    assert len(two) == len(one)  # pruned to what both read, so still one join (and its traces)


def test_a_cast_that_would_fail_in_an_unread_column_is_not_computed() -> None:
    run = run_script(
        TABLES + f"CREATE VIEW v AS SELECT x.k, u.w FROM {DERIVED};\n-- step\n"
        "INSERT INTO t VALUES (1, 'a', 5);\nINSERT INTO u VALUES (1, 10);\n"
    )
    assert [r for r, _ in run.outputs[0]["v"].to_rows()] == [(1, 10)]

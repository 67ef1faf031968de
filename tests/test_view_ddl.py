"""CREATE VIEW's forms: MATERIALIZED, TEMPORARY, OR REPLACE, IF NOT EXISTS, a column list
and COMMENTs are accepted; what would change the published view is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbspc.compiler.errors import DbspcError
from dbspc.compiler.frontend.program import compile_program

REPO = Path(__file__).resolve().parent.parent
TABLE = "CREATE TABLE t (a INT, b INT);\n"


def columns(text: str, view: str = "v") -> list[str]:
    return [f.name for f in compile_program(TABLE + text).views[view].plan.fields]


def test_golden_views_columns_and_order() -> None:
    program = compile_program((REPO / "sql_tests" / "create_view_forms.sql").read_text().split("-- step")[0])
    assert list(program.views) == ["totals", "big", "regions", "small", "doubled"]
    names = {v: [f.name for f in view.plan.fields] for v, view in program.views.items()}
    assert names["totals"] == ["region", "sum(amount)", "count(1)"]
    assert names["doubled"] == ["region", "twice"]
    assert "amount > 10" in program.views["big"].sql  # OR REPLACE's definition, not IF NOT EXISTS's


@pytest.mark.parametrize(
    "create",
    [
        "CREATE MATERIALIZED VIEW",
        "CREATE TEMPORARY VIEW",
        "CREATE TEMP VIEW",
        "CREATE OR REPLACE VIEW",
        "CREATE OR REPLACE MATERIALIZED VIEW",
        "CREATE VIEW IF NOT EXISTS",
    ],
)
def test_forms_define_a_view(create: str) -> None:
    assert columns(f"{create} v AS SELECT a, a + b FROM t;") == ["a", "(a + b)"]


def test_or_replace_takes_the_later_definition_and_its_place() -> None:
    text = (
        "CREATE VIEW v AS SELECT a FROM t;\nCREATE VIEW w AS SELECT b FROM t;\n"
        "CREATE OR REPLACE VIEW v AS SELECT b FROM w;"
    )
    program = compile_program(TABLE + text)
    assert list(program.views) == ["w", "v"]  # v now reads w, so it comes after it
    assert [f.name for f in program.views["v"].plan.fields] == ["b"]
    assert program.catalog.tables["v"].names == ("b",)


def test_if_not_exists_keeps_the_first_definition() -> None:
    text = "CREATE VIEW v AS SELECT a FROM t;\nCREATE VIEW IF NOT EXISTS v AS SELECT b, a FROM t;"
    assert columns(text) == ["a"]


def test_column_list_renames_and_comments_are_kept_out_of_the_way() -> None:
    text = "CREATE VIEW v (x COMMENT 'first', y) COMMENT 'a view' AS SELECT a, sum(b) FROM t GROUP BY a;"
    assert columns(text) == ["x", "y"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CREATE VIEW v AS SELECT a FROM t;\nCREATE VIEW v AS SELECT b FROM t;", "relation 'v' is already defined"),
        ("CREATE VIEW v AS SELECT a FROM t;\nCREATE MATERIALIZED VIEW v AS SELECT b FROM t;", "already defined"),
        ("CREATE OR REPLACE VIEW t AS SELECT 1 AS a;", "'t' is a table"),
        (
            "CREATE VIEW v AS SELECT a FROM t;\nCREATE VIEW w AS SELECT a FROM v;\n"
            "CREATE OR REPLACE VIEW v AS SELECT b AS a FROM t;",
            "view 'w' reads it",
        ),
        ("CREATE OR REPLACE VIEW IF NOT EXISTS v AS SELECT a FROM t;", "cannot also say IF NOT EXISTS"),
        (
            "CREATE VIEW v AS SELECT a FROM t;\nCREATE OR REPLACE VIEW v AS SELECT a + 1 AS a FROM v;",
            "cannot be replaced by a query that reads 'v'",
        ),
        ("CREATE GLOBAL TEMPORARY VIEW v AS SELECT a FROM t;", "GLOBAL TEMPORARY is not supported"),
        ("CREATE VIEW v TBLPROPERTIES ('k' = 'v') AS SELECT a FROM t;", "TBLPROPERTIES is not supported"),
        ("CREATE VIEW v WITH SCHEMA BINDING AS SELECT a FROM t;", "WITH SCHEMA is not supported"),
        ("CREATE VIEW v (x INT) AS SELECT a FROM t;", "without types"),
        ("CREATE VIEW v (x NOT NULL) AS SELECT a FROM t;", "only a COMMENT may follow"),
        ("CREATE VIEW v (x) AS SELECT a, b FROM t;", "names 1 columns but its query returns 2"),
    ],
)
def test_refused(text: str, message: str) -> None:
    with pytest.raises(DbspcError, match=message) as info:
        compile_program(TABLE + text)
    assert info.value.span is not None


def test_comments_after_the_semicolons() -> None:
    """A comment after a statement's `;`, or at the end of the file, is not a statement."""
    program = compile_program(
        "CREATE TABLE t (a INT); -- the table\nCREATE VIEW v AS SELECT a FROM t; -- a view\n-- end\n"
    )
    assert list(program.views) == ["v"]

"""Malformed SQL gets a positioned error, never a traceback.

Each case below once escaped as an internal exception (found by mutating the golden
scripts: a token dropped, repeated or replaced). The last two tests run such mutations
with a fixed seed, so a new escape fails here rather than in a user's terminal."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest
from sqlglot.dialects.spark import Spark

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import DbspcError
from dbspc.runtime.script import run_script

GOLDENS = Path(__file__).resolve().parent.parent / "sql_tests"
DDL = "CREATE TABLE t (id INT, g STRING, x DOUBLE, d DECIMAL(10, 2), PRIMARY KEY (id));\n"

VIEWS = [
    ("SELECT FROM t", "SELECT lists no columns"),
    ("SELECT g, count(DISTINCT) AS n FROM t GROUP BY g", "COUNT(DISTINCT) needs an argument"),
    ("SELECT id, 1.5e AS n FROM t", "'1.5e' is not a number"),
    ("SELECT id, id & .5. AS n FROM t", "'0.5.' is not a number"),  # a bitwise operator binds its operands
    ("SELECT id, ~ . AS n FROM t", "an operator is missing an operand"),
    ("SELECT id, (.) AS n FROM t", "a parenthesis holds nothing"),
    ("SELECT id FROM t ORDER BY 99999999999999999999 LIMIT 1", "is not in select list"),
    ("SELECT id, SUM(x) OVER (ORDER BY id ROWS BETWEEN 1e400 PRECEDING AND CURRENT ROW) AS s FROM t",
     "a ROWS frame bound must be an integer literal"),
    ("SELECT id, COUNT(*) OVER (ORDER BY x RANGE . 0.5 PRECEDING) AS s FROM t", "a RANGE frame offset"),
    ("SELECT g, sort_array(collect_list(ORDER BY 1)) AS s FROM t GROUP BY g",
     "wrong number or kind of arguments to COLLECT_LIST()"),
    ("SELECT id, 92233720368547758071.0000000000000000000 AS n FROM t",
     "decimal precision 39 exceeds max precision 38"),
    ("SELECT id, 1234567890123456789012345678901234567890 AS n FROM t",
     "decimal precision 40 exceeds max precision 38"),
    ("SELECT id, CAST(x AS DECIMAL(50, 2)) AS n FROM t", "decimal precision 50 exceeds max precision 38"),
    # sqlglot's "Required keyword: 'expression' missing for <class '...And'>", in the user's words
    ("SELECT id FROM t WHERE x = 1 AND", "AND is missing an operand"),
    ("SELECT id, x + AS n FROM t", "an operator is missing an operand"),
]  # fmt: skip

TABLES = [
    ("CREATE TABLE u (k INT, '', v STRING)", "is not a column definition"),
    ("CREATE TABLE u (k INT, v DECIMAL(10, 1.5))", "the parameters of DECIMAL(10, 1.5) must be integers"),
    ("CREATE TABLE u (k INT, v DECIMAL(5, 10))", "decimal scale (10) cannot be greater than precision (5)"),
    ("CREATE TABLE u (k INT, v DECIMAL(39, 2))", "decimal precision 39 exceeds max precision 38"),
]

STEPS = [
    "UPDATE t SET x = 1, NULL WHERE id = 1",
    "UPDATE t SET x, -1 = x + 1 WHERE id = 1",
    "INSERT INTO t VALUES (2, 'b', 1.0, 92233720368547758070.12345678901234567890123456789)",
]


@pytest.mark.parametrize(("query", "message"), VIEWS)
def test_a_malformed_view_is_a_positioned_error(query: str, message: str) -> None:
    with pytest.raises(DbspcError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        compile_sql(DDL + f"CREATE VIEW v AS {query};")
    assert caught.value.span is not None and caught.value.span.line == 2


@pytest.mark.parametrize(("table", "message"), TABLES)
def test_a_malformed_table_is_a_positioned_error(table: str, message: str) -> None:
    with pytest.raises(DbspcError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        compile_sql(f"{table};\nCREATE VIEW v AS SELECT * FROM u;")
    assert caught.value.span is not None and caught.value.span.line == 1


@pytest.mark.parametrize("statement", STEPS)
def test_a_malformed_step_is_a_positioned_error(statement: str) -> None:
    script = DDL + "CREATE VIEW v AS SELECT * FROM t;\n-- step\nINSERT INTO t VALUES (1, 'a', 0.5, 1.25);\n"
    with pytest.raises(DbspcError) as caught:
        run_script(script + f"-- step\n{statement};\n")
    assert caught.value.span is not None


_REPLACEMENTS = ["NULL", "1", "'a'", "1.5", "x", "(", ")", ",", "SELECT", "GROUP BY", "OVER ()", "DISTINCT", "*",
                 "-", "AS", "JOIN", "ON", "WHERE", "INTERVAL 1 DAY", "TRUE", "1e400", "99999999999999999999", "''",
                 "CASE", "END", "ORDER BY 1", "LIMIT 1", "(SELECT 1)", "EXISTS (SELECT 1)", ".", "%", "/ 0",
                 "2147483647", "9223372036854775807", "'2024-02-30'", "CAST('a' AS INT)"]  # fmt: skip


def _mutated(text: str, rng: random.Random) -> str:
    """`text` with one or two tokens dropped, replaced or followed by another."""
    for _ in range(rng.randint(1, 2)):
        try:
            tokens = list(Spark().tokenize(text))
        except Exception:  # an earlier mutation opened a string: keep it as it is
            return text
        if not tokens:
            return text
        t = rng.choice(tokens)
        a, b = t.start, t.end + 1
        r = rng.random()
        if r < 0.3:
            text = text[:a] + text[b:]
        elif r < 0.7:
            text = text[:a] + rng.choice(_REPLACEMENTS) + text[b:]
        else:
            text = text[:b] + " " + rng.choice(_REPLACEMENTS) + " " + text[b:]
    return text


def _goldens() -> list[str]:
    return [p.read_text() for p in sorted(GOLDENS.glob("*.sql")) + sorted(GOLDENS.glob("recursion/*.sql"))]


def test_mutated_programs_compile_or_fail_with_a_dbspc_error() -> None:
    rng = random.Random(20261127)
    programs = [text.split("-- step")[0] for text in _goldens()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Spark extensions warn as they compile
        for _ in range(1500):
            text = _mutated(rng.choice(programs), rng)
            try:
                compile_sql(text)
            except DbspcError:
                pass


def test_mutated_steps_run_or_fail_with_a_dbspc_error() -> None:
    rng = random.Random(1127)
    scripts = [text for text in _goldens() if "-- step" in text]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(150):
            head, _, steps = rng.choice(scripts).partition("-- step")
            try:
                run_script(head + "-- step" + _mutated(steps, rng))
            except DbspcError:
                pass


def test_a_statement_that_is_no_create_is_quoted_as_written() -> None:
    """sqlglot re-generates `this is not sql` as `NOT this IS sql`; the error quotes the text."""
    with pytest.raises(DbspcError, match="statement 'this is not sql' is not allowed here") as caught:
        compile_sql(DDL + "this is not sql;")
    assert caught.value.span is not None and (caught.value.span.line, caught.value.span.col) == (2, 1)

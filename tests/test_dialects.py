"""`--dialect` selects evaluation rules, not only a grammar (compiler/dialect.py).

Each full dialect's rules where the engines differ: `/` on integers, a zero divisor,
integer overflow, STRING beside a number. DuckDB's rules are checked against DuckDB
itself; the other dialects are parsed only, which `dbspc` says on stderr.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from dbspc.cli import main
from dbspc.compiler.dialect import DIALECTS, semantics_of
from dbspc.compiler.errors import RuntimeSqlError, SqlError, UnsupportedSql
from dbspc.runtime.script import run_script

TABLE = "CREATE TABLE t (a INT, b INT);\n"
ROWS = [(7, 2), (-7, 2), (1, 0), (0, 0), (-1, 0), (None, 0)]


def _values(rows: list[tuple[Any, ...]]) -> str:
    return ", ".join("(" + ", ".join("NULL" if v is None else str(v) for v in r) + ")" for r in rows)


def _view(select: str, dialect: str, rows: list[tuple[Any, ...]] = ROWS) -> list[tuple[Any, ...]]:
    """The rows of `CREATE VIEW v AS <select>` over t = rows, in `dialect`."""
    text = f"{TABLE}CREATE VIEW v AS {select};\n-- step\nINSERT INTO t VALUES {_values(rows)};\n"
    run = run_script(text, dialect=dialect)
    z = run.outputs[0]["v"]
    return sorted((row for row, weight in z.to_rows() for _ in range(weight)), key=repr)


def _one(select: str, dialect: str, a: int | None, b: int | None) -> Any:
    rows = _view(select, dialect, [(a, b)])
    assert len(rows) == 1
    return rows[0][0]


# -- Spark (the default) and Databricks ---------------------------------------------------


@pytest.mark.parametrize("dialect", ["spark", "databricks"])
def test_spark_family_divides_as_double_and_raises_on_zero(dialect: str) -> None:
    assert _one("SELECT a / b FROM t", dialect, 7, 2) == 3.5
    with pytest.raises(RuntimeSqlError, match="division by zero"):
        _one("SELECT a / b FROM t", dialect, 1, 0)
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        _one("SELECT a + b FROM t", dialect, 2147483647, 1)


@pytest.mark.parametrize("dialect", ["spark", "databricks"])
def test_spark_family_compares_before_in(dialect: str) -> None:
    """Spark reads `a <=> b IN (false)` as (a <=> b) IN (false); sqlglot parses it with
    parentheses of its own around `b IN (false)` (where INT <=> BOOLEAN has no type).
    Spark 4.1's answers, per row (a, b): (NULL, 1) -> true, (NULL, NULL) -> false."""
    rows = [(None, 1), (None, None)]
    assert _view("SELECT b, a <=> b IN (false) FROM t", dialect, rows) == [(1, True), (None, False)]
    with pytest.raises(SqlError, match="no common type"):
        _view("SELECT b, a <=> (b IN (1)) FROM t", dialect, rows)
    assert _view("SELECT b, a = b IN (true) FROM t", dialect, [(1, 1), (1, 2)]) == [(1, True), (2, False)]


# -- SQLite (sqllogictest) ----------------------------------------------------------------


def test_sqlite_truncates_and_gives_null_on_zero() -> None:
    assert _one("SELECT a / b FROM t", "sqlite", 7, 2) == 3
    assert _one("SELECT a / b FROM t", "sqlite", -7, 2) == -3
    assert _one("SELECT a / b FROM t", "sqlite", 1, 0) is None
    assert _one("SELECT a % b FROM t", "sqlite", 1, 0) is None
    # 64-bit integers: INT + INT does not overflow at 2^31
    assert _one("SELECT a + b FROM t", "sqlite", 2147483647, 1) == 2147483648


def test_sqlite_bare_column_is_answered_when_its_group_agrees() -> None:
    # SQLite takes a bare column from some row of the group: exact when all rows agree
    rows = [(1, 10), (1, 10), (2, None), (2, None), (3, 4)]
    assert _view("SELECT a, b, COUNT(*) FROM t GROUP BY a", "sqlite", rows) == [(1, 10, 2), (2, None, 2), (3, 4, 1)]
    assert _view("SELECT b FROM t", "sqlite", [(1, 7)]) == [(7,)]  # no GROUP BY: one group
    # used only where it is evaluated: COALESCE(55, b) never reads b
    varied = [(1, 10), (1, 11)]
    assert _view("SELECT COALESCE(55, b) FROM t GROUP BY a", "sqlite", varied) == [(55,)]
    for mixed in (varied, [(1, 10), (1, None)]):
        with pytest.raises(RuntimeSqlError, match="column 'b' is neither grouped nor aggregated"):
            _view("SELECT a, b FROM t GROUP BY a", "sqlite", mixed)
    with pytest.raises(SqlError, match="must appear in GROUP BY"):
        _view("SELECT a, b FROM t GROUP BY a", "spark", rows)


def test_sqlite_bare_column_follows_changes() -> None:
    text = (
        f"{TABLE}CREATE VIEW v AS SELECT a, b FROM t GROUP BY a;\n"
        "-- step\nINSERT INTO t VALUES (1, 10), (2, 20);\n"
        "-- step\nINSERT INTO t VALUES (1, 10); UPDATE t SET b = 21 WHERE a = 2;\n"
        "-- step\nDELETE FROM t WHERE a = 1;\n"
    )
    for incremental in (True, False):
        outputs = run_script(text, dialect="sqlite", incremental=incremental).outputs
        assert [sorted(o["v"].to_rows()) for o in outputs] == [
            [((1, 10), 1), ((2, 20), 1)],
            [((2, 20), -1), ((2, 21), 1)],
            [((1, 10), -1)],
        ]


def test_sqlite_sums_text_by_its_numeric_prefix_and_total_is_real() -> None:
    text = (
        "CREATE TABLE s (k INT, y VARCHAR(8));\n"
        "CREATE VIEW v AS SELECT k, SUM(y) AS s, AVG(y) AS a, TOTAL(y) AS t, TOTAL(k) AS tk FROM s GROUP BY k;\n"
        "CREATE VIEW w AS SELECT TOTAL(k) AS t, SUM(k) AS s FROM s WHERE y = 'none';\n"
        "-- step\nINSERT INTO s VALUES (1, 'true'), (1, ' 12abc'), (1, NULL), (2, '-1.5e1x'), (2, '.5');\n"
    )
    outputs = run_script(text, dialect="sqlite").outputs[0]
    assert sorted(outputs["v"].to_rows()) == [((1, 12.0, 6.0, 12.0, 3.0), 1), ((2, -14.5, -7.25, -14.5, 4.0), 1)]
    assert outputs["w"].to_rows() == [((0.0, None), 1)]  # TOTAL of no values is 0.0, SUM's is NULL


def test_sqlite_coalesce_of_a_constant_keeps_its_type() -> None:
    # random/expr/slt_good_3.test: SQLite's COALESCE(43, AVG(67)) is the INTEGER 43, so
    # 43 / -60 is 0; a common type would make it 43.0 / -60 = -0.72 (a wrong result)
    assert _view("SELECT -30 - COALESCE(43, -AVG(a)) / -60 FROM t", "sqlite", [(67, 1)]) == [(-30,)]
    assert _view("SELECT COALESCE(NULL, (-81), AVG(a)) / 14 FROM t", "sqlite", [(67, 1)]) == [(-5,)]
    assert _view("SELECT COALESCE(b, 7) / 2 FROM t", "sqlite", [(1, None), (1, 9)]) == [(3,), (4,)]
    assert _view("SELECT COALESCE(-CAST(NULL AS INTEGER), 5) / 2 FROM t", "sqlite", [(1, 1)]) == [(2,)]
    # INTEGER or REAL depending on the row: refused (random/expr/slt_good_7.test)
    with pytest.raises(UnsupportedSql, match="COALESCE of INTEGER and REAL"):
        _view("SELECT COALESCE(-CAST(NULL AS INTEGER), -SUM(a), AVG(a)) / -65 FROM t", "sqlite", [(1, 1)])
    with pytest.raises(UnsupportedSql, match="CASE of INTEGER and REAL"):
        _view("SELECT CASE WHEN a > 0 THEN 7 ELSE AVG(a) END / 2 FROM t", "sqlite", [(1, 1)])
    assert _view("SELECT CASE WHEN a > 0 THEN 7 ELSE NULL END / 2 FROM t", "sqlite", [(1, 1)]) == [(3,)]
    assert _view("SELECT CASE WHEN a > 0 THEN 7 ELSE 2.5 END FROM t", "spark", [(1, 1)]) == [(7.0,)]


# -- PostgreSQL ---------------------------------------------------------------------------


def test_postgres_integer_division_truncates() -> None:
    assert _one("SELECT a / b FROM t", "postgres", 7, 2) == 3
    assert _one("SELECT a / b FROM t", "postgres", -7, 2) == -3
    assert _one("SELECT a % b FROM t", "postgres", -7, 2) == -1
    assert _one("SELECT 7 / 2 + a FROM t", "postgres", 0, 1) == 3


def test_postgres_raises_on_zero_divisor_and_overflow() -> None:
    for select in ("SELECT a / b FROM t", "SELECT a % b FROM t"):
        with pytest.raises(RuntimeSqlError, match="division by zero"):
            _one(select, "postgres", 1, 0)
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        _one("SELECT a + b FROM t", "postgres", 2147483647, 1)
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        _one("SELECT a / b FROM t", "postgres", -2147483648, -1)  # PostgreSQL: integer out of range


def test_postgres_refuses_what_it_does_not_implement() -> None:
    with pytest.raises(UnsupportedSql, match=r"DECIMAL operands .* --dialect postgres"):
        run_script("CREATE TABLE t (d DECIMAL(5,2));\nCREATE VIEW v AS SELECT d / 3 FROM t;\n", dialect="postgres")
    with pytest.raises(UnsupportedSql, match="STRING and number"):
        run_script("CREATE TABLE t (s STRING);\nCREATE VIEW v AS SELECT s + 1 FROM t;\n", dialect="postgres")
    with pytest.raises(UnsupportedSql, match="STRING and number"):
        run_script("CREATE TABLE t (s STRING);\nCREATE VIEW v AS SELECT s FROM t WHERE s = 1;\n", dialect="postgres")


# -- DuckDB, checked against DuckDB itself ------------------------------------------------


def _duckdb(select: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INT, b INT)")
    con.execute(f"INSERT INTO t VALUES {_values(rows)}")
    return sorted(con.execute(select).fetchall(), key=repr)


def _same(ours: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]]) -> bool:
    def norm(v: Any) -> Any:
        return "nan" if isinstance(v, float) and math.isnan(v) else v

    return [tuple(map(norm, r)) for r in ours] == [tuple(map(norm, r)) for r in theirs]


@pytest.mark.parametrize(
    "select",
    [
        "SELECT a / b AS q FROM t",  # DOUBLE division; x / 0 is +-Infinity, 0 / 0 NaN
        "SELECT a // b AS q, a % b AS r FROM t WHERE b <> 0",
        "SELECT a + b AS s, a * b AS p, a - b AS d FROM t",
        "SELECT 7 / 2 AS q FROM t",
    ],
)
def test_duckdb_dialect_agrees_with_duckdb(select: str) -> None:
    ours = _view(select, "duckdb")
    theirs = _duckdb(select, ROWS)
    assert _same(ours, theirs), (ours, theirs)


@pytest.mark.parametrize(
    ("select", "rows"),
    [
        ("SELECT a // b FROM t", [(1, 0)]),
        ("SELECT a % b FROM t", [(1, 0)]),
        ("SELECT a + b FROM t", [(2147483647, 1)]),
        ("SELECT a * b FROM t", [(65536, 65536)]),
    ],
)
def test_duckdb_dialect_raises_where_duckdb_raises(select: str, rows: list[tuple[Any, ...]]) -> None:
    with pytest.raises(duckdb.Error):
        _duckdb(select, rows)
    with pytest.raises(RuntimeSqlError):
        _view(select, "duckdb", rows)


def test_duckdb_refuses_string_number_mixes_as_duckdb_does() -> None:
    with pytest.raises(duckdb.Error):
        duckdb.sql("SELECT s + 1 FROM (SELECT 'a' AS s)").fetchall()
    with pytest.raises(UnsupportedSql, match="STRING and number"):
        run_script("CREATE TABLE t (s STRING);\nCREATE VIEW v AS SELECT s + 1 FROM t;\n", dialect="duckdb")


# -- parse-only dialects and the command line ---------------------------------------------


def test_every_dialect_is_full_or_parse_only() -> None:
    full = {d for d in DIALECTS if not semantics_of(d).parse_only}
    assert full == {"spark", "databricks", "sqlite", "postgres", "duckdb"}
    with pytest.raises(SqlError, match="unknown dialect 'oracle'"):
        semantics_of("oracle")


@pytest.mark.parametrize(("dialect", "warns"), [("mysql", True), ("hive", True), ("postgres", False), ("spark", False)])
def test_cli_warns_about_parse_only_dialects(dialect: str, warns: bool, tmp_path: Path) -> None:
    script = tmp_path / "s.sql"
    script.write_text(f"{TABLE}CREATE VIEW v AS SELECT a + b AS s FROM t;\n-- step\nINSERT INTO t VALUES (1, 2);\n")
    for command in ("compile", "run"):
        result = CliRunner().invoke(main, [command, "--dialect", dialect, str(script)])
        assert result.exit_code == 0, result.stderr
        warned = f"warning: --dialect {dialect} is parsed as {dialect} but evaluated with Spark 4" in result.stderr
        assert warned == warns, result.stderr


@pytest.mark.parametrize(("dialect", "expected"), [("postgres", "3"), ("spark", "3.5"), ("sqlite", "3")])
def test_cli_seven_halves(dialect: str, expected: str, tmp_path: Path) -> None:
    script = tmp_path / "s.sql"
    script.write_text(f"{TABLE}CREATE VIEW v AS SELECT a / b AS q FROM t;\n-- step\nINSERT INTO t VALUES (7, 2);\n")
    result = CliRunner().invoke(main, ["run", "--output", "jsonl", "--dialect", dialect, str(script)])
    assert result.exit_code == 0, result.stderr
    assert f'"row": [{expected}]' in result.stdout

"""The `dbspc` command line, and the atomicity of a step (what the CLI's errors rely on).

`compile` prints the circuit (text / json / dot); `run` prints each step's output deltas
as JSON lines or aligned tables; a user error exits with code 1 and prints exactly one
line `file:line:col: error: ...` with no traceback. A step that is rejected (bad input or
a runtime SQL error) leaves every table and operator state untouched (runtime.pipeline).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from dbspc.cli import main
from dbspc.compiler.errors import DbspcError, InputError, RuntimeSqlError
from dbspc.compiler.types import BIGINT, INT, STRING
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet

REPO = Path(__file__).resolve().parent.parent

EXAMPLE_44 = """CREATE TABLE t (id INT, x INT, a INT);
CREATE TABLE r (id INT, y INT, s INT);
CREATE VIEW v AS
SELECT DISTINCT t1.x, t2.y FROM (
  SELECT t.x, t.id FROM t WHERE t.a > 2) t1
JOIN (
  SELECT r.id, r.y FROM r WHERE r.s > 5) t2 ON t1.id = t2.id;
"""

TYPES_SCRIPT = """CREATE TABLE e (id INT, name STRING, amount DECIMAL(8,2), day DATE, at TIMESTAMP, score DOUBLE);
CREATE VIEW everything AS SELECT id, name, amount, day, at, score FROM e;
CREATE VIEW totals AS SELECT name, SUM(amount) AS total, COUNT(*) AS n FROM e GROUP BY name;
-- step
INSERT INTO e VALUES (3, 'al', -0.25, DATE '1999-12-31', TIMESTAMP '2000-01-01 00:00:00', -2.0),
                     (2, 'bo', 10.50, DATE '2024-02-29', TIMESTAMP '2024-03-01 12:34:56', 1.5),
                     (1, NULL, NULL, NULL, NULL, NULL);
-- step
INSERT INTO e VALUES (4, 'cy', 1.00, DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00:00', 0.5);
DELETE FROM e WHERE id = 4;
-- step
DELETE FROM e WHERE id = 2;
INSERT INTO e VALUES (2, 'bo', 11.00, DATE '2024-02-29', TIMESTAMP '2024-03-01 12:34:56', 1.5);
"""

BO_OLD = [2, "bo", "10.50", "2024-02-29", "2024-03-01 12:34:56", 1.5]
BO_NEW = [2, "bo", "11.00", "2024-02-29", "2024-03-01 12:34:56", 1.5]
AL = [3, "al", "-0.25", "1999-12-31", "2000-01-01 00:00:00", -2.0]
TYPES_JSONL = [
    {"step": 1, "view": "everything", "row": [1, None, None, None, None, None], "weight": 1},
    {"step": 1, "view": "everything", "row": BO_OLD, "weight": 1},
    {"step": 1, "view": "everything", "row": AL, "weight": 1},
    {"step": 1, "view": "totals", "row": [None, None, 1], "weight": 1},
    {"step": 1, "view": "totals", "row": ["al", "-0.25", 1], "weight": 1},
    {"step": 1, "view": "totals", "row": ["bo", "10.50", 1], "weight": 1},
    # step 2 inserts and deletes the same row: no change in any view, no line
    {"step": 3, "view": "everything", "row": BO_OLD, "weight": -1},
    {"step": 3, "view": "everything", "row": BO_NEW, "weight": 1},
    {"step": 3, "view": "totals", "row": ["bo", "10.50", 1], "weight": -1},
    {"step": 3, "view": "totals", "row": ["bo", "11.00", 1], "weight": 1},
]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def invoke(args: Sequence[str]) -> Result:
    return CliRunner().invoke(main, list(args))


def dbspc_command() -> list[str]:
    """The installed entry point if there is one, else `python cli.py`."""
    exe = Path(sys.executable).parent / "dbspc"
    return [str(exe)] if exe.exists() else [sys.executable, str(REPO / "cli.py")]


def run_dbspc(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*dbspc_command(), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


NODE = re.compile(r"^%(\d+) = ([a-z_]+)(?:\[(.*)\])?\((.*)\) : \((.*)\)$")


def parse_text_dump(text: str) -> dict[int, tuple[str, str, list[int]]]:
    """%id -> (kind, params, input ids) from the text dump's node lines."""
    nodes: dict[int, tuple[str, str, list[int]]] = {}
    for line in text.splitlines():
        m = NODE.match(line)
        if m:
            inputs = [int(a.strip()[1:]) for a in m.group(4).split(",") if a.strip()]
            nodes[int(m.group(1))] = (m.group(2), m.group(3) or "", inputs)
    return nodes


# ---------------------------------------------------------------------------------------
# compile
# ---------------------------------------------------------------------------------------


def test_compile_text_shows_figure_1(tmp_path: Path) -> None:
    """DBSP Figure 1 (§4.4): ΔV = H(z⁻¹(I P), P), P = π(A⋈B + z⁻¹(I A)⋈B + A⋈z⁻¹(I B))."""
    result = invoke(["compile", write(tmp_path, "ex.sql", EXAMPLE_44)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("-- circuit (incremental)")
    nodes = parse_text_dump(result.stdout)
    kinds = [k for k, _, _ in nodes.values()]
    assert kinds.count("integrate") == 3 and kinds.count("join") == 3 and kinds.count("distinct_h") == 1
    assert "distinct" not in kinds and "differentiate" not in kinds

    def delayed(n: int) -> int | None:
        kind, _, ins = nodes[n]
        if kind == "delay" and nodes[ins[0]][0] == "integrate":
            return nodes[ins[0]][2][0]
        return None

    joins = [ins for k, _, ins in nodes.values() if k == "join"]
    (plain,) = [ins for ins in joins if delayed(ins[0]) is None and delayed(ins[1]) is None]
    a, b = plain
    shapes = {tuple(("zI", delayed(i)) if delayed(i) is not None else i for i in ins) for ins in joins}
    assert shapes == {(a, b), (("zI", a), b), (a, ("zI", b))}
    (h,) = [ins for k, _, ins in nodes.values() if k == "distinct_h"]
    assert delayed(h[0]) == h[1] and nodes[h[1]][0] == "map"
    assert nodes[nodes[h[1]][2][0]][0] == "plus"


def test_compile_json_and_dot(tmp_path: Path) -> None:
    path = write(tmp_path, "ex.sql", EXAMPLE_44)
    result = invoke(["compile", path, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["incremental"] is True
    kinds = [n["kind"] for n in doc["nodes"]]
    assert kinds.count("integrate") == 3 and kinds.count("join") == 3 and kinds.count("distinct_h") == 1
    by_id = {n["id"]: n for n in doc["nodes"]}
    for n in doc["nodes"]:
        if n["kind"] == "delay":
            assert by_id[n["inputs"][0]]["kind"] == "integrate" and n["stateful"]

    result = invoke(["compile", path, "--format", "dot"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("digraph")
    assert result.stdout.count("shape=diamond") == 3  # the three joins
    assert result.stdout.count("->") == sum(len(n["inputs"]) for n in doc["nodes"])


RECURSIVE_UNION = """CREATE TABLE edges (src INT, dst INT);
CREATE VIEW tc AS
WITH RECURSIVE r(a, b) AS (
  SELECT src, dst FROM edges
  {op}
  SELECT r.a, e.dst FROM r JOIN edges e ON r.b = e.src
)
SELECT a, b FROM r;
"""


def test_recursive_union_is_a_positioned_warning_in_spark_dialect(tmp_path: Path) -> None:
    """Spark 4 refuses UNION inside a recursive CTE (UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE);
    dbspc evaluates it and says so, at the CTE, once, and exits 0. UNION ALL, and UNION in
    another dialect, are said nothing of."""
    write(tmp_path, "tc.sql", RECURSIVE_UNION.format(op="UNION"))
    proc = run_dbspc(["compile", "tc.sql"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("tc.sql:3:16: warning: recursive CTE 'r' uses UNION, which Spark SQL refuses")
    assert "UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE" in lines[0] and lines[1:] == [
        " 3 | WITH RECURSIVE r(a, b) AS (",
        "   |                ^",
    ]
    assert "%" in proc.stdout  # the circuit is printed as without the warning
    assert run_dbspc(["compile", "--dialect", "duckdb", "tc.sql"], tmp_path).stderr == ""
    all_ = write(tmp_path, "all.sql", RECURSIVE_UNION.format(op="UNION ALL"))
    assert invoke(["compile", all_]).output.count("warning") == 0


def test_compile_non_incremental(tmp_path: Path) -> None:
    """--non-incremental prints the lifted circuit ↑Q: one join, one distinct, no state."""
    result = invoke(["compile", write(tmp_path, "ex.sql", EXAMPLE_44), "--non-incremental"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("-- circuit (non-incremental)")
    kinds = [k for k, _, _ in parse_text_dump(result.stdout).values()]
    assert sorted(kinds) == sorted(
        ["source", "source", "filter", "filter", "map", "map", "join", "map", "distinct", "output"]
    )


def test_compile_distributed_prints_the_plan(tmp_path: Path) -> None:
    """The join moves both tables by id once (stage 1 checks them, by that key, before
    it joins them); DISTINCT needs the whole row, so the join's output is moved once
    more: two stages."""
    path = write(tmp_path, "ex.sql", EXAMPLE_44)
    result = invoke(["compile", path, "--no-report", "--distributed"])
    assert result.exit_code == 0, result.output
    plan_text = result.stdout[result.stdout.index("-- distributed plan") :]
    assert plan_text.startswith("-- distributed plan: 2 stage(s), 3 channel(s)\n"), plan_text
    assert "stage 0" not in plan_text, plan_text
    checks = plan_text.split("stage 1:")[1].split("stage 2:")[0]
    assert "check t against its share by hash(#0) -> ch" in checks and "check r against its share by" in checks
    assert "distinct_h" in plan_text.split("stage 2:")[1]
    refused = invoke(["compile", path, "--non-incremental", "--distributed"])
    assert refused.exit_code != 0 and "only incremental circuits run distributed" in refused.output


def test_compile_ignores_script_steps(tmp_path: Path) -> None:
    result = invoke(["compile", write(tmp_path, "types.sql", TYPES_SCRIPT)])
    assert result.exit_code == 0, result.output
    assert "aggregate_incremental" in result.stdout


# ---------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [[], ["--non-incremental"]], ids=["incremental", "non-incremental"])
def test_run_jsonl_format(tmp_path: Path, flags: list[str]) -> None:
    """One compact JSON object per line, keys step/view/row/weight in that order; steps
    from 1; views by name, rows sorted (NULL first); NULL is null; decimals, dates and
    timestamps are strings."""
    result = invoke(["run", write(tmp_path, "types.sql", TYPES_SCRIPT), "--output", "jsonl", *flags])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [json.loads(line) for line in lines] == TYPES_JSONL
    for line in lines:
        assert line == json.dumps(json.loads(line))
        assert line.startswith('{"step": ')
        assert list(json.loads(line)) == ["step", "view", "row", "weight"]


def test_run_table_format(tmp_path: Path) -> None:
    result = invoke(["run", write(tmp_path, "types.sql", TYPES_SCRIPT)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "-- step 1: view everything (3 changes)"
    assert lines[1].split() == ["id", "|", "name", "|", "amount", "|", "day", "|", "at", "|", "score", "|", "weight"]
    assert [c.strip() for c in lines[2].split("|")] == ["1", "NULL", "NULL", "NULL", "NULL", "NULL", "+1"]
    assert [c.strip() for c in lines[3].split("|")] == [
        "2",
        "bo",
        "10.50",
        "2024-02-29",
        "2024-03-01 12:34:56",
        "1.5",
        "+1",
    ]
    assert "-- step 2: view everything (0 changes)" in lines
    assert "-- step 3: view totals (2 changes)" in lines
    i = lines.index("-- step 3: view totals (2 changes)")
    assert [c.strip() for c in lines[i + 2].split("|")] == ["bo", "10.50", "1", "-1"]
    assert [c.strip() for c in lines[i + 3].split("|")] == ["bo", "11.00", "1", "+1"]
    # the columns of a table line up
    header, first = lines[1], lines[2]
    assert [m.start() for m in re.finditer(r"\|", header)] == [m.start() for m in re.finditer(r"\|", first)]


def test_run_through_the_real_executable(tmp_path: Path) -> None:
    """The same jsonl through a subprocess (the `dbspc` entry point or `python cli.py`)."""
    write(tmp_path, "types.sql", TYPES_SCRIPT)
    proc = run_dbspc(["run", "types.sql", "--output", "jsonl"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line) for line in proc.stdout.splitlines()] == TYPES_JSONL
    assert proc.stderr == ""


# ---------------------------------------------------------------------------------------
# user errors: exit 1, one line file:line:col: error: ..., no traceback
# ---------------------------------------------------------------------------------------

UNKNOWN_COLUMN = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS
  SELECT id, nope FROM t;
"""
UNKNOWN_COLUMN_IN_WHERE = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id FROM t
  WHERE zzz > 1;
"""
MISSING_PAREN = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id FROM t WHERE (x > 1;
"""
MISSPELLED_KEYWORD = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELEC id FROM t;
"""
UNTERMINATED_STRING = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT 'abc FROM t;
"""
TRAILING_COMMA = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id, FROM t;
"""
BAD_STEP = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id FROM t;
-- step
INSERT INTO t VALUES (1, 2);
-- step
INSERT INTO t VALUES (1, 2, 3);
"""
UNKNOWN_TABLE_IN_STEP = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id FROM t;
-- step
INSERT INTO nosuch VALUES (1, 2);
"""

# (script, expected line, column, a word the message must contain). The column is where
# the offending token starts (1-based).
POSITIONED_ERRORS = {
    "unknown-column": (UNKNOWN_COLUMN, 3, 14, "nope"),
    "unknown-column-in-where": (UNKNOWN_COLUMN_IN_WHERE, 3, 9, "zzz"),
    "syntax-missing-paren": (MISSING_PAREN, 2, None, "syntax"),
    "syntax-misspelled-keyword": (MISSPELLED_KEYWORD, 2, None, ""),
    "syntax-unterminated-string": (UNTERMINATED_STRING, 2, None, ""),
    # Spark rejects it (TRAILING_COMMA_IN_SELECT); sqlglot silently drops the comma
    "syntax-trailing-comma": (TRAILING_COMMA, 2, None, ""),
    "step-wrong-arity": (BAD_STEP, 6, 23, "3 values"),
    "step-unknown-table": (UNKNOWN_TABLE_IN_STEP, 4, 13, "nosuch"),
}


def check_one_error_line(stderr: str, filename: str, line: int, col: int | None, word: str) -> None:
    """One `file:line:col: error:` line, then the source line with a caret under the
    column (when the position is in the file) and at most a hint: nothing else."""
    lines = stderr.splitlines()
    extra = [x for x in lines[1:] if not x.startswith("hint: ")]
    assert len(extra) in (0, 2) and len(lines) - 1 - len(extra) <= 1, f"unexpected stderr:\n{stderr}"
    if extra and col is not None:
        assert extra[0].startswith(f" {line} | ") and extra[1].index("^") == len(f" {line} | ") + col - 1, stderr
    m = re.fullmatch(rf"{re.escape(filename)}:(\d+):(\d+): error: (.+)", lines[0])
    assert m, f"not 'file:line:col: error: ...': {lines[0]!r}"
    assert int(m.group(1)) == line, lines[0]
    if col is not None:
        assert int(m.group(2)) == col, lines[0]
    assert word in m.group(3), lines[0]
    assert "Traceback" not in stderr


@pytest.mark.parametrize("case", list(POSITIONED_ERRORS))
def test_user_error_cli_runner(tmp_path: Path, case: str) -> None:
    script, line, col, word = POSITIONED_ERRORS[case]
    path = write(tmp_path, "bad.sql", script)
    result = invoke(["run", path])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    check_one_error_line(result.stderr, path, line, col, word)


@pytest.mark.parametrize("case", ["unknown-column", "syntax-misspelled-keyword", "step-wrong-arity"])
def test_user_error_subprocess(tmp_path: Path, case: str) -> None:
    """Through a real process, so nothing else (a logger, a warning) reaches stderr."""
    script, line, col, word = POSITIONED_ERRORS[case]
    write(tmp_path, "bad.sql", script)
    proc = run_dbspc(["run", "bad.sql"], tmp_path)
    assert proc.returncode == 1
    check_one_error_line(proc.stderr, "bad.sql", line, col, word)


def test_compile_error_exit_code(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.sql", UNKNOWN_COLUMN)
    result = invoke(["compile", path, "--format", "json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    check_one_error_line(result.stderr, path, 3, 14, "nope")


def test_runtime_error_stops_the_run(tmp_path: Path) -> None:
    """Division by zero (Spark ANSI) at step 2: step 1 was printed, exit 1, one line."""
    script = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id, 10 / x AS q FROM t;
-- step
INSERT INTO t VALUES (1, 2);
-- step
INSERT INTO t VALUES (2, 0);
-- step
INSERT INTO t VALUES (3, 5);
"""
    path = write(tmp_path, "div.sql", script)
    result = invoke(["run", path, "--output", "jsonl"])
    assert result.exit_code == 1
    assert [json.loads(x) for x in result.stdout.splitlines()] == [
        {"step": 1, "view": "v", "row": [1, 5.0], "weight": 1}
    ]
    lines = result.stderr.splitlines()
    assert len(lines) in (1, 3) and re.match(rf"{re.escape(path)}(:\d+:\d+)?: error: .*division by zero", lines[0])


def test_delete_of_absent_rows_in_a_script_deletes_nothing(tmp_path: Path) -> None:
    """A script's DELETE ... WHERE only sees present rows, so it cannot over-delete."""
    script = """CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id FROM t;
-- step
INSERT INTO t VALUES (1, 2);
-- step
DELETE FROM t WHERE id = 5;
DELETE FROM t WHERE id = 1;
DELETE FROM t WHERE id = 1;
"""
    result = invoke(["run", write(tmp_path, "del.sql", script), "--output", "jsonl"])
    assert result.exit_code == 0, result.output
    assert [json.loads(x)["weight"] for x in result.stdout.splitlines()] == [1, -1]


def test_missing_file_is_a_clean_error(tmp_path: Path) -> None:
    result = invoke(["run", str(tmp_path / "nope.sql")])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and "nope.sql" in result.stderr


# ---------------------------------------------------------------------------------------
# A rejected step leaves all state untouched (runtime.pipeline)
# ---------------------------------------------------------------------------------------

STATEFUL = """CREATE TABLE t (id INT, x INT);
CREATE TABLE r (id INT, y STRING);
CREATE VIEW joined AS SELECT t.id, t.x, r.y FROM t JOIN r ON t.id = r.id;
CREATE VIEW uniq AS SELECT DISTINCT x FROM t;
CREATE VIEW agg AS SELECT id, COUNT(*) AS n, SUM(x) AS s, MIN(x) AS lo FROM t GROUP BY id;
CREATE VIEW ratio AS SELECT id, 100 / x AS q FROM t;
"""
T_TYPES = (INT, INT)
R_TYPES = (INT, STRING)


def t_rows(rows: list[tuple[Any, ...]], weights: list[int] | None = None) -> ZSet:
    return ZSet.from_rows(rows, T_TYPES, weights)


def r_rows(rows: list[tuple[Any, ...]], weights: list[int] | None = None) -> ZSet:
    return ZSet.from_rows(rows, R_TYPES, weights)


GOOD_STEPS: list[dict[str, ZSet]] = [
    {"t": t_rows([(1, 2), (1, 2), (2, 5)]), "r": r_rows([(1, "a"), (2, "b"), (3, None)])},
    {"t": t_rows([(1, 2), (3, 4)], [-1, 1]), "r": r_rows([(2, "b")], [-1])},
    {"t": t_rows([(1, 2), (2, 5)], [-1, -1]), "r": r_rows([(3, "c")])},
]


def snapshot(p: Pipeline) -> dict[str, list[tuple[tuple[Any, ...], int]]]:
    return {name: p.table_contents(name).to_rows() for name in ("t", "r")}


def outputs(out: dict[str, ZSet]) -> dict[str, list[tuple[tuple[Any, ...], int]]]:
    return {view: z.to_rows() for view, z in out.items()}


BAD_STEPS: dict[str, tuple[dict[str, ZSet], type[Exception], list[str]]] = {
    # r's change is fine; t deletes a row that was never there
    "delete-absent-row": (
        {"r": r_rows([(4, "d")]), "t": t_rows([(9, 9)], [-1])},
        InputError,
        ["'t'", "not there"],
    ),
    # t holds (1, 2) once after step 1... the bad step deletes it twice
    "delete-too-many-copies": (
        {"t": t_rows([(3, 4)], [-2])},
        InputError,
        ["'t'", "not there"],
    ),
    # 100 / 0 in view 'ratio' (Spark ANSI raises); every other view would accept it
    "division-by-zero": (
        {"t": t_rows([(5, 0), (1, 7)]), "r": r_rows([(5, "z")])},
        RuntimeSqlError,
        ["division by zero", "ratio"],
    ),
    # schema drift: x arrives as BIGINT and r's y as INT
    "schema-drift": (
        {"r": r_rows([(4, "d")]), "t": ZSet.from_rows([(1, 2)], (INT, BIGINT))},
        InputError,
        ["'t'", "id INT", "x INT", "BIGINT"],
    ),
    "schema-drift-string": (
        {"r": ZSet.from_rows([(4, 5)], (INT, INT))},
        InputError,
        ["'r'", "id INT", "y STRING"],
    ),
}


@pytest.mark.parametrize("incremental", [True, False], ids=["incremental", "non-incremental"])
@pytest.mark.parametrize("bad", list(BAD_STEPS))
def test_rejected_step_leaves_state_untouched(bad: str, incremental: bool) -> None:
    """A step that fails raises a DbspcError and changes nothing: the following steps
    produce exactly what a pipeline that never saw the bad step produces."""
    changes, error, words = BAD_STEPS[bad]
    p = Pipeline.from_sql(STATEFUL, incremental=incremental)
    reference = Pipeline.from_sql(STATEFUL, incremental=incremental)
    assert outputs(p.step(GOOD_STEPS[0])) == outputs(reference.step(GOOD_STEPS[0]))
    assert outputs(p.step(GOOD_STEPS[1])) == outputs(reference.step(GOOD_STEPS[1]))
    before_tables, before_state = snapshot(p), p.executor.state_rows()
    for _ in range(2):  # rejected again: the failure itself changed nothing either
        with pytest.raises(error) as info:
            p.step(changes)
        assert isinstance(info.value, DbspcError)
        message = str(info.value)
        for word in words:
            assert word in message, message
        assert "\n" not in info.value.located("f.sql")
        assert snapshot(p) == before_tables
        assert p.executor.state_rows() == before_state
    assert p.steps == reference.steps
    assert outputs(p.step(GOOD_STEPS[2])) == outputs(reference.step(GOOD_STEPS[2]))
    assert snapshot(p) == snapshot(reference)
    # and the integrated outputs still agree with a from-scratch pipeline fed the whole
    # history at once
    fresh = Pipeline.from_sql(STATEFUL, incremental=not incremental)
    whole = {
        name: ZSet.concat([s[name] for s in GOOD_STEPS if name in s], s0.types).consolidate()
        for name, s0 in GOOD_STEPS[0].items()
    }
    once = outputs(fresh.step(whole))
    replay = Pipeline.from_sql(STATEFUL, incremental=incremental)
    acc: dict[str, ZSet] = {}
    for step in GOOD_STEPS:
        for view, delta in replay.step(step).items():
            acc[view] = ZSet.concat([acc.get(view, ZSet.empty(delta.types)), delta], delta.types).consolidate()
    assert outputs(acc) == once


def test_input_error_location_is_one_line() -> None:
    """What the CLI prints for a bad delete: `file: error: cannot delete ... from 't' ...`."""
    p = Pipeline.from_sql(STATEFUL)
    with pytest.raises(InputError) as info:
        p.step({"t": t_rows([(1, None)], [-1])})
    located = info.value.located("s.sql")
    assert re.fullmatch(r"s\.sql(:\d+:\d+)?: error: cannot delete .*'t'.*", located)
    assert "x=NULL" in located


@pytest.mark.parametrize("command", ["compile", "run", "test"])
def test_a_file_that_is_not_utf8_is_a_positioned_error(tmp_path: Path, command: str) -> None:
    path = tmp_path / "x.sql"
    path.write_bytes(b"CREATE TABLE t (a INT);\n-- \x82\xff\n")
    result = invoke([command, str(tmp_path if command == "test" else path)])  # `test` takes a folder too
    assert result.exit_code == 1, result.output
    if command == "test":  # a golden run reports each script's failure on its standard output
        assert f"{path}:2:4: error: the file is not valid UTF-8" in result.output
    else:
        check_one_error_line(result.stderr, str(path), 2, 4, "UTF-8")


@pytest.mark.parametrize("text", ["", "-- only a comment\n", "CREATE TABLE t (a INT);\n"])
def test_a_file_without_views_compiles_to_an_empty_circuit(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.sql"
    path.write_text(text)
    result = invoke(["compile", str(path)])
    assert result.exit_code == 0, result.output
    assert "0 stateful operator(s)" in result.output


def test_deep_nesting_compiles_and_runs(tmp_path: Path) -> None:
    """1,000 nested parentheses run, and a chain of 2,000 terms compiles and dumps, on a
    deep stack (compiler/deep_stack.py) instead of raising RecursionError."""
    parens = "(" * 1000 + "a" + ")" * 1000
    path = write(
        tmp_path,
        "deep.sql",
        f"CREATE TABLE t (a INT);\nCREATE VIEW v AS SELECT {parens} AS x FROM t;\n-- step\nINSERT INTO t VALUES (7);\n",
    )
    result = invoke(["run", "--output", "jsonl", path])
    assert result.exit_code == 0, result.output
    assert '"row": [7]' in result.stdout
    chain = "a" + " + 1" * 2000
    path = write(tmp_path, "chain.sql", f"CREATE TABLE t (a BIGINT);\nCREATE VIEW v AS SELECT {chain} AS x FROM t;\n")
    result = invoke(["compile", path])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_long_chains_run_in_stages(tmp_path: Path) -> None:
    """A 3,000-term chain runs (in stages of runtime.expressions.STAGE_HEIGHT: one polars
    expression with an overflow check per level grows exponentially in its depth), with
    the overflow checks of every level intact."""
    chain = "a" + " + 1" * 3000
    product = "a" + " * 1" * 3000
    text = (
        f"CREATE TABLE t (a INT);\nCREATE VIEW v AS SELECT {chain} AS x FROM t WHERE {product} > 1;\n"
        "-- step\nINSERT INTO t VALUES (1), (2);\n-- step\nINSERT INTO t VALUES (2147483000);\n"
    )
    result = invoke(["run", "--output", "jsonl", write(tmp_path, "chain.sql", text)])
    assert result.exit_code == 1, result.output
    assert '"row": [3002]' in result.stdout and '"row": [3001]' not in result.stdout
    assert "integer overflow" in result.stderr and "Traceback" not in result.output


def state_held(tmp_path: Path, script: str) -> list[list[str]]:
    """`dbspc run --state` of `script`: the words of each line of its state table."""
    result = invoke(["run", "--state", write(tmp_path, "s.sql", script)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    return [line.split() for line in lines[lines.index("-- state held:") + 1 :]]


def test_run_reports_state_per_operator(tmp_path: Path) -> None:
    """--state ends with the rows and bytes each stateful operator holds, labelled as in
    the circuit dump; z⁻¹ of an integral holds nothing of its own and is not listed."""
    script = (
        "CREATE TABLE t (k INT, v BIGINT);\nCREATE TABLE u (k INT);\n"
        "CREATE VIEW j AS SELECT t.k, SUM(v) AS s FROM t JOIN u ON t.k = u.k GROUP BY t.k;\n"
        "-- step\nINSERT INTO t VALUES (1, 10), (1, 20), (2, 5);\nINSERT INTO u VALUES (1), (3);\n"
    )
    table = state_held(tmp_path, script)
    assert [(r[1], r[2], r[3]) for r in table[:-1]] == [
        ("%2", "integrate", "2"),  # u
        ("%4", "integrate", "3"),  # t
        ("%11", "aggregate_incremental", "1"),  # the group k = 1
    ]
    assert table[-1][1:4] == ["total", "6", "rows"]  # (t and u are held as the join's integrals)
    assert all(int(r[-2].replace(",", "").split(".")[0]) > 0 for r in table)


def test_run_reports_a_table_held_apart(tmp_path: Path) -> None:
    """A table no operator integrates whole (here only filtered, then aggregated) is held
    by the pipeline in a whole-row index for its delete checks: --state lists it too."""
    script = (
        "CREATE TABLE t (a INT, b INT);\n"
        "CREATE VIEW v AS SELECT a, COUNT(*) AS n FROM t WHERE b > 0 GROUP BY a;\n"
        "-- step\nINSERT INTO t VALUES (1, 2), (2, 0);\n"
    )
    table = state_held(tmp_path, script)
    assert [r[1:4] for r in table] == [
        ["%3", "aggregate_incremental", "1"],
        ["table", "t", "(whole-row"],
        ["total", "3", "rows"],
    ]


def test_run_writes_csv_and_parquet_files(tmp_path: Path) -> None:
    """--output csv|parquet: one file per view, with step, weight and the view's columns."""
    import polars as pl

    for fmt in ("csv", "parquet"):
        result = invoke(["run", "--output", fmt, "--out", str(tmp_path / fmt), str(REPO / "examples" / "orders.sql")])
        assert result.exit_code == 0, result.output
        frame = (
            pl.read_csv(tmp_path / fmt / "big_orders.csv")
            if fmt == "csv"
            else pl.read_parquet(tmp_path / fmt / "big_orders.parquet")
        )
        assert frame.columns == ["step", "weight", "name", "id", "amount"] and frame.height > 0
        assert set(frame["weight"].to_list()) <= {1, -1}


SLT_FILE = """statement ok
CREATE TABLE t1(a INTEGER, b INTEGER)

statement ok
INSERT INTO t1 VALUES(1, 2)

query I nosort
SELECT a + b FROM t1
----
3
"""


def test_slt_reads_a_path_relative_to_where_it_is_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file runs in a child process started in the repository's folder; a relative
    path named a file there, or none."""
    (tmp_path / "one.test").write_text(SLT_FILE)
    monkeypatch.chdir(tmp_path)
    result = invoke(["slt", "one.test", "-q"])
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


def test_slt_refuses_a_file_that_is_not_utf8_before_it_starts(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.test", tmp_path / "b.test"
    good.write_text(SLT_FILE)
    bad.write_bytes(b"statement ok\nCREATE TABLE t(a INT) -- \xff\n")
    result = invoke(["slt", str(tmp_path), "-q"])
    assert result.exit_code == 1, result.output
    check_one_error_line(result.stderr, str(bad), 2, 26, "UTF-8")

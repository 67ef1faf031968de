"""Golden SQL scripts (sql_tests/*.sql) and scripts that must fail (sql_tests/errors/*.sql).

For each script, the tests prove that:
- after every step, each view's integrated output (the sum of its deltas so far) equals
  DuckDB's recomputation of the view from scratch on the integrated tables;
- the non-incremental (lifted) circuit yields exactly the same deltas;
- the circuit dump and the per-step jsonl deltas match the checked-in goldens
  `<case>.circuit` and `<case>.out` (`pytest --update-goldens` rewrites them, but only
  for scripts whose oracle check passed).

For each error script, `dbspc run` exits with code 1 and prints the one line in
`<case>.err` (`file:line:col: error: ...`, the path relative to the repo root).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbspc.compiler.circuit.dump import to_text
from dbspc.runtime.goldens import golden_diff, jsonl_text, oracle_disagreement
from dbspc.runtime.oracle import assert_same_rows, duckdb_views
from dbspc.runtime.script import ScriptRun, run_script
from dbspc.runtime.zset import ZSet

REPO = Path(__file__).resolve().parent.parent
GOLDENS = REPO / "sql_tests"
CASES = sorted(GOLDENS.glob("*.sql"))
ERROR_CASES = sorted((GOLDENS / "errors").glob("*.sql"))


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


# -- helpers ---------------------------------------------------------------------------


def spark_only(text: str) -> str | None:
    """Why DuckDB cannot be the oracle, for a script whose header says
    `-- oracle: spark (reason)`: DuckDB's semantics differ there and Spark wins."""
    m = re.search(r"^-- oracle: spark \((.+)\)$", text, flags=re.MULTILINE)
    return m.group(1) if m else None


def check_golden(path: Path, actual: str, update: bool) -> None:
    """`path` holds `actual`; with `update`, make it so."""
    if update:
        if not path.exists() or path.read_text() != actual:
            path.write_text(actual)
        return
    rel = path.relative_to(REPO)
    if not path.exists():
        pytest.fail(f"golden {rel} is missing; run `pytest tests/test_goldens.py --update-goldens`", pytrace=False)
    diff = golden_diff(path.read_text(), actual, str(rel))
    if diff:
        pytest.fail(
            f"{rel} differs from the golden:\n{diff}\n"
            "If the change is intended, run `pytest tests/test_goldens.py --update-goldens`.",
            pytrace=False,
        )


def check_against_duckdb(case: str, run: ScriptRun) -> None:
    """After every step, every view's integrated output is positive and equals DuckDB's
    recomputation (the check `dbspc test --update` makes before blessing a golden)."""
    problem = oracle_disagreement(run, "duckdb")
    assert problem is None, f"{case}: {problem}"


# -- golden scripts --------------------------------------------------------------------


def test_there_are_goldens() -> None:
    """The suite is not silently empty."""
    assert len(CASES) >= 40
    assert len(ERROR_CASES) >= 12


@pytest.mark.parametrize("path", CASES, ids=_ids(CASES))
def test_golden(path: Path, update_goldens: bool) -> None:
    """Incremental = DuckDB from scratch at every step; = non-incremental; = goldens."""
    case = path.stem
    text = path.read_text()
    assert text.startswith("-- title: "), f"{case}: a golden script starts with `-- title: ...`"
    run = run_script(text, keep_tables=True)
    assert run.outputs, f"{case}: a golden script has steps"
    if spark_only(text) is None:
        check_against_duckdb(case, run)
    else:  # Spark is the reference; tests/test_spark_oracle.py checks it
        from tests.test_spark_oracle import SPARK_CASES

        assert case in SPARK_CASES, f"{case} says `-- oracle: spark`, so it must be in the Spark subset"

    lifted = run_script(text, incremental=False)
    assert not lifted.pipeline.circuit.incremental
    for number, (inc, full) in enumerate(zip(run.outputs, lifted.outputs, strict=True), start=1):
        assert inc.keys() == full.keys()
        for view in inc:
            assert_same_rows(
                inc[view], full[view], f"{case} step {number}, view {view}: incremental vs non-incremental", exact=True
            )

    check_golden(path.with_suffix(".circuit"), to_text(run.pipeline.circuit), update_goldens)
    check_golden(path.with_suffix(".out"), jsonl_text(run), update_goldens)


def _circuit_lines(text: str) -> dict[int, tuple[str, list[int]]]:
    """Node number -> (operator kind, input numbers), from a text dump."""
    nodes = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"%(\d+) = ([a-z_]+)(?:\[.*\])?\(([^)]*)\) :", line)
        assert m, f"unexpected dump line: {line}"
        inputs = [int(a.strip().lstrip("%")) for a in m.group(3).split(",") if a.strip()]
        nodes[int(m.group(1))] = (m.group(2), inputs)
    return nodes


def test_paper_4_4_circuit_is_figure_1() -> None:
    """The §4.4 view compiles to the paper's Figure 1: the join's bilinear expansion
    (three joins over two delayed integrals) feeding distinct's H operator, which reads
    the delayed integral of its own input: three `integrate`, three `join`, one
    `distinct_h`."""
    text = (GOLDENS / "paper_4_4_ivm.sql").read_text()
    run = run_script(text)
    nodes = _circuit_lines(to_text(run.pipeline.circuit))
    kinds = [k for k, _ in nodes.values()]
    assert kinds.count("integrate") == 3
    assert kinds.count("join") == 3
    assert kinds.count("distinct_h") == 1
    (h_inputs,) = [ins for k, ins in nodes.values() if k == "distinct_h"]
    delayed = [i for i in h_inputs if nodes[i][0] == "delay"]
    assert len(delayed) == 1, "distinct_h reads one delayed stream"
    (integral,) = nodes[delayed[0]][1]
    assert nodes[integral][0] == "integrate"
    assert nodes[integral][1] == [i for i in h_inputs if i != delayed[0]], "…the integral of its own input"
    joins = [ins for k, ins in nodes.values() if k == "join"]
    delayed_sides = sorted(sum(nodes[i][0] == "delay" for i in ins) for ins in joins)
    assert delayed_sides == [0, 1, 1], "Δa⋈Δb, z⁻¹(Ia)⋈Δb, Δa⋈z⁻¹(Ib)"


# -- scripts that must fail ------------------------------------------------------------


@pytest.mark.parametrize("path", ERROR_CASES, ids=_ids(ERROR_CASES))
def test_error(path: Path, update_goldens: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dbspc run` refuses the script: exit code 1, one positioned error line, no traceback."""
    from dbspc.cli import main

    monkeypatch.chdir(REPO)
    rel = path.relative_to(REPO).as_posix()
    result = CliRunner().invoke(main, ["run", rel])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1, f"{rel}: exit code {result.exit_code}, stdout:\n{result.stdout}"
    lines = result.stderr.splitlines()
    # The error line, then at most the source line with its caret and a hint.
    assert 1 <= len(lines) <= 4 and all(x.startswith((" ", "hint: ")) for x in lines[1:]), result.stderr
    shape = re.match(rf"{re.escape(rel)}:\d+:\d+: error: \S", lines[0])
    assert shape, f"{rel}: not `file:line:col: error: ...`: {lines[0]}"
    check_golden(path.with_suffix(".err"), lines[0] + "\n", update_goldens)


def test_deleting_absent_rows_is_rejected_and_state_kept() -> None:
    """A change deleting a row that is not there is refused with a clear error, and
    neither the tables nor any view state move (the next valid step still agrees with
    DuckDB). A script's DELETE only matches present rows, so this goes through the API."""
    from dbspc.compiler.errors import InputError

    run = run_script(
        "CREATE TABLE t (a INT, b STRING);\n"
        "CREATE VIEW v AS SELECT b, COUNT(*) AS n FROM t GROUP BY b;\n"
        "-- step\nINSERT INTO t VALUES (1, 'x'), (1, 'x');\n"
    )
    pipeline = run.pipeline
    types = pipeline.table_types("t")
    before = pipeline.table_contents("t").to_rows()
    bad = ZSet.from_rows([(1, "x"), (2, "y")], types, [-3, 1])
    with pytest.raises(InputError, match=r"cannot delete .*'t'.*a=1, b='x'"):
        pipeline.step({"t": bad})
    assert pipeline.table_contents("t").to_rows() == before
    out = pipeline.step({"t": ZSet.from_rows([(1, "x"), (3, "z")], types, [-1, 1])})
    assert out["v"].to_rows() == [(("x", 1), 1), (("x", 2), -1), (("z", 1), 1)]
    expected = duckdb_views(pipeline, {"t": pipeline.table_contents("t")})
    assert_same_rows([(("x", 1), 1), (("z", 1), 1)], expected["v"], "after the rejected step")

"""A team's own goldens: `dbspc test DIR` (create with --update only where the oracle
agrees, then a unified diff and exit 1 on a change) and the pytest plugin that collects
the same scripts as test items."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbspc.cli import main
from dbspc.runtime import goldens

REPO = Path(__file__).resolve().parent.parent
SCRIPT = """CREATE TABLE orders (id INT, region STRING, amount DECIMAL(10,2));
CREATE VIEW revenue AS SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY region;
-- step
INSERT INTO orders VALUES (1, 'eu', 10.00), (2, 'us', 5.50), (3, 'eu', 1.25);
-- step
DELETE FROM orders WHERE id = 1;
"""


def cli(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def test_update_then_check_then_diff(tmp_path: Path) -> None:
    (tmp_path / "revenue.sql").write_text(SCRIPT)
    code, out, err = cli(["test", str(tmp_path)])
    assert code == 1 and "revenue.out is missing" in err
    code, out, _ = cli(["test", "--update", str(tmp_path)])
    assert code == 0 and "updated revenue.out" in out and (tmp_path / "revenue.out").exists()
    assert not (tmp_path / "revenue.circuit").exists()  # circuit goldens are opted into
    (tmp_path / "revenue.circuit").write_text("")
    assert cli(["test", "--update", str(tmp_path)])[0] == 0
    assert (tmp_path / "revenue.circuit").read_text().startswith("-- circuit (incremental)")
    code, out, _ = cli(["test", str(tmp_path)])
    assert code == 0 and out.splitlines()[-1] == "1 passed, 0 failed"
    # A changed view: a unified diff of the goldens, exit 1.
    (tmp_path / "revenue.sql").write_text(SCRIPT.replace("COUNT(*) AS n", "COUNT(*) + 1 AS n"))
    code, _, err = cli(["test", str(tmp_path)])
    assert code == 1 and "--- " in err and "+++ " in err and "(golden)" in err and "@@" in err


def test_update_refuses_when_the_oracle_disagrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "revenue.sql").write_text(SCRIPT)
    import dbspc.runtime.oracle as oracle

    monkeypatch.setattr(oracle, "duckdb_views", lambda run, tables: {v: [] for v in run.pipeline.view_names()})
    outcome = goldens.check(tmp_path / "revenue.sql", update=True)
    assert not outcome.ok and "the duckdb oracle disagrees" in outcome.message
    assert not (tmp_path / "revenue.out").exists()


def test_a_bad_script_is_a_positioned_failure(tmp_path: Path) -> None:
    (tmp_path / "bad.sql").write_text("CREATE TABLE t (a INT);\nCREATE VIEW v AS SELECT nope FROM t;\n")
    code, _, err = cli(["test", str(tmp_path)])
    assert code == 1 and f"{tmp_path / 'bad.sql'}:2:" in err and "nope" in err


def test_the_pytest_plugin_collects_goldens(tmp_path: Path) -> None:
    views = tmp_path / "views"
    views.mkdir()
    (views / "revenue.sql").write_text(SCRIPT)
    (tmp_path / "pytest.ini").write_text("[pytest]\ndbspc_goldens = views\n")
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]  # the plugin: an entry point
    first = subprocess.run([*pytest_cmd, "--dbspc-update"], cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0 and "1 passed" in first.stdout, first.stdout + first.stderr
    (views / "revenue.out").write_text((views / "revenue.out").read_text().replace('"weight": 1', '"weight": 2', 1))
    second = subprocess.run(pytest_cmd, cwd=tmp_path, capture_output=True, text=True)
    assert second.returncode == 1 and "1 failed" in second.stdout and "(golden)" in second.stdout, second.stdout

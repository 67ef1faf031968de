"""The docs cannot drift: the SQL reference and the worked example's picture are what
the compiler generates now, and every example in `dbspc --help` runs."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbspc.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_generated_docs_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen_reference.py"), "--check"],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr + "\nrun `make docs` (docs/gen_reference.py) and commit the result"


def _examples() -> list[str]:
    runner = CliRunner()
    helps = [runner.invoke(main, ["--help"]).stdout]
    helps += [runner.invoke(main, [name, "--help"]).stdout for name in main.commands]  # type: ignore[attr-defined]
    return [line.strip() for text in helps for line in text.splitlines() if line.strip().startswith("dbspc ")]


def test_help_has_examples() -> None:
    assert len(_examples()) >= 8


@pytest.mark.parametrize("example", _examples())
def test_help_example_runs(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(main, shlex.split(example)[1:])
    assert result.exit_code == 0, f"`{example}` exited {result.exit_code}:\n{result.output}"

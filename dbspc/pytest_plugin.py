"""A pytest plugin: a team's golden scripts as test items of their own suite.

    # pyproject.toml (or pytest.ini)
    [tool.pytest.ini_options]
    dbspc_goldens = ["views/tests"]

Each `.sql` script under those directories is one test item, checked as `dbspc test`
checks it (runtime/goldens.py); `pytest --dbspc-update` rewrites the goldens where the
DuckDB oracle agrees. Installed with dbspc (entry point `pytest11`), and inert in a
project that sets no `dbspc_goldens`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("dbspc_goldens", "directories of dbspc golden scripts (*.sql with .out)", type="paths", default=[])
    parser.addini("dbspc_dialect", "the SQL dialect of the golden scripts", default="spark")
    parser.addoption("--dbspc-update", action="store_true", help="rewrite dbspc goldens where the oracle agrees")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".sql":
        return None
    roots = [Path(r).resolve() for r in parent.config.getini("dbspc_goldens")]
    if any(file_path.resolve().is_relative_to(r) for r in roots):
        return GoldenScript.from_parent(parent, path=file_path)
    return None


class GoldenMismatch(Exception):
    pass


class GoldenScript(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield GoldenItem.from_parent(self, name=self.path.stem)


class GoldenItem(pytest.Item):
    def runtest(self) -> None:
        from dbspc.runtime.goldens import check

        outcome = check(
            self.path,
            update=bool(self.config.getoption("dbspc_update")),
            dialect=str(self.config.getini("dbspc_dialect")),
        )
        if not outcome.ok:
            raise GoldenMismatch(outcome.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, GoldenMismatch):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"dbspc golden {self.name}"

"""Shared test fixtures: the `--update-goldens` option and one Spark session per run."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite sql_tests/*.circuit, *.out and errors/*.err (only where the oracle agrees)",
    )


@pytest.fixture(scope="session")
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def _java_or_fail() -> None:
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and Path(home, "bin", "java").exists()):
        pytest.fail(
            "Spark tests need Java 17, and no `java` is on PATH (nor JAVA_HOME set). "
            "Install it, e.g. `apt-get install -y openjdk-17-jre-headless`.",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """ONE local SparkSession for the whole run (per xdist worker; group spark tests
    with `@pytest.mark.xdist_group("spark")` so they share one worker)."""
    _java_or_fail()
    from dbspc.runtime.spark.session import local_session

    # (it also quiets pyspark's logger of failed queries: the tests that expect errors
    # check them themselves)
    session = local_session("dbspc-tests")
    try:
        yield session
    finally:
        session.stop()

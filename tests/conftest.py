"""Shared test fixtures: the `--update-goldens` option and one Spark session per run."""

from __future__ import annotations

import logging
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
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # distributed mode runs dbspc in workers
    session = (
        SparkSession.builder.master("local[2]")
        .appName("dbspc-tests")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    # pyspark logs every failed query's whole JVM stack trace from this Python logger;
    # the tests that expect errors check them themselves.
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    try:
        yield session
    finally:
        session.stop()

"""Registers the spike's marker (the project's pytest config lives in pyproject.toml, which this spike leaves alone)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: scale-out spike on Spark executors (runs on local[2] too)")

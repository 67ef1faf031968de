"""Both scale-out prototypes against Spark SQL recomputing the view, after every refresh, on small data.

    cd /work/wt-scale && PYTHONPATH=$PWD /work/main/.venv/bin/python -m pytest -q bench/scale_spike/test_spike.py
Set SPIKE_MASTER=local-cluster[2,1,1024] to run it on two executor JVMs (default local[2]).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from bench.scale_spike import design_b
from bench.scale_spike.common import Plan, generate, integrate, recompute, session

pytestmark = pytest.mark.cluster
BUCKETS = 4


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    s = session(os.environ.get("SPIKE_MASTER", "local[2]"), "spike-test", BUCKETS)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    # Few customers, so that most of them change and (a)'s per-key bulk load stays short.
    return generate(tmp_path_factory.mktemp("data"), orders=3_000, change=400, refreshes=3, moves=100,
                    customers=500, regions=20)


def test_bucketed_state(spark: SparkSession, plan: Plan, tmp_path: Path) -> None:
    labels = design_b.bucket_labels(spark, BUCKETS)
    for k in range(plan.refreshes + 1):
        design_b.refresh(spark, tmp_path / "state", labels, plan.orders_delta(k), plan.customers_delta(k),
                         tmp_path / "out")
        assert integrate(spark.read.parquet(str(tmp_path / "out" / "v*"))) == recompute(spark, plan, k), k


def test_bucketed_state_survives_a_failed_refresh(spark: SparkSession, plan: Plan, tmp_path: Path) -> None:
    """Files of an uncommitted version (a refresh that failed before the manifest switch) are ignored."""
    labels = design_b.bucket_labels(spark, BUCKETS)
    state, out = tmp_path / "state", tmp_path / "out"
    design_b.refresh(spark, state, labels, plan.orders_delta(0), plan.customers_delta(0), out)
    design_b.refresh(spark, state, labels, plan.orders_delta(1), plan.customers_delta(1), tmp_path / "lost")
    (state / "manifest.json").write_text('{"version": 0}')  # as if the switch to version 1 never happened
    for k in range(1, plan.refreshes + 1):
        design_b.refresh(spark, state, labels, plan.orders_delta(k), plan.customers_delta(k), out)
        assert integrate(spark.read.parquet(str(out / "v*"))) == recompute(spark, plan, k), k


def test_keyed_state_streaming(spark: SparkSession, plan: Plan, tmp_path: Path) -> None:
    from bench.scale_spike import design_a

    pipe = design_a.Pipeline(spark, tmp_path)
    for k in range(plan.refreshes + 1):
        pipe.refresh(plan.orders_delta(k), plan.customers_delta(k))
        assert integrate(pipe.output()) == recompute(spark, plan, k), k
    assert pipe.chained, pipe.chain_error  # Spark 4.3 runs both keyed-state operators in one query

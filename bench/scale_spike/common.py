"""Shared pieces of the scale-out spike: the Spark session, the test data, the oracle, metrics.

The view of the spike (issue 12):
    SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
    FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region
Amounts travel as integer cents (BIGINT) inside the prototypes, so sums are exact and vectorised;
the oracle compares cents as well.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable  # the executors run this interpreter
# transformWithStateInPandas needs protobuf, which the project's venv lacks; the spike installs it beside
# the worktree (pip install --target .spike-deps "protobuf>=6.33.5,<7") rather than into the shared venv.
DEPS = ROOT / ".spike-deps"
CUSTOMERS = 100_000
REGIONS = 1_000
VIEW = """SELECT c.region, COUNT(*) AS n, CAST(SUM(o.amount) * 100 AS BIGINT) AS total
FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region"""

ORDER_CHANGE = pa.schema([("id", pa.int64()), ("customer_id", pa.int32()), ("amount", pa.decimal128(10, 2)),
                          ("w", pa.int32())])
CUSTOMER_CHANGE = pa.schema([("id", pa.int32()), ("region", pa.int32()), ("w", pa.int32())])


def session(master: str, app: str, partitions: int) -> SparkSession:
    """A session on `master` whose executors import this worktree and run the project's venv.

    The UI stays on (bound to loopback through SPARK_LOCAL_IP) because its REST API is where the
    shuffle byte counts come from.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = PYTHON
    os.environ["PYSPARK_DRIVER_PYTHON"] = PYTHON
    path = f"{ROOT}:{DEPS}" if DEPS.exists() else str(ROOT)
    os.environ["PYTHONPATH"] = path  # inherited by the Python workers the driver JVM starts
    spark = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.executor.memory", "768m")
        .config("spark.executorEnv.PYTHONPATH", path)
        .config("spark.executorEnv.PYSPARK_PYTHON", PYTHON)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.sql.adaptive.enabled", "false")  # keep one task per bucket: AQE would coalesce them
        .config("spark.locality.wait", "0")  # a bucket's task runs at once wherever a core is free
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stateStore.providerClass",
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# --- data -------------------------------------------------------------------------------------------------


@dataclass
class Plan:
    """Where one run's inputs live: snapshot k of each table and the change batch that led to it."""

    root: Path
    refreshes: int

    def orders(self, k: int) -> Path:
        return self.root / f"orders_v{k}.parquet"

    def customers(self, k: int) -> Path:
        return self.root / f"customers_v{k}.parquet"

    def orders_delta(self, k: int) -> Path:
        return self.root / f"orders_d{k}.parquet"

    def customers_delta(self, k: int) -> Path:
        return self.root / f"customers_d{k}.parquet"


def _orders(ids: np.ndarray, cust: np.ndarray, cents: np.ndarray, w: int) -> pa.Table:
    # A DECIMAL(10,2) of value cents/100 is stored as the 128-bit integer `cents` (little endian, positive).
    words = np.zeros((len(cents), 2), np.int64)
    words[:, 0] = cents
    amount = pa.Array.from_buffers(pa.decimal128(10, 2), len(cents), [None, pa.py_buffer(words.tobytes())])
    return pa.table({"id": ids, "customer_id": cust, "amount": amount,
                     "w": np.full(len(ids), w, np.int32)}, schema=ORDER_CHANGE)


def generate(root: Path, orders: int, change: int, refreshes: int, moves: int, seed: int = 12,
             customers: int = CUSTOMERS, regions: int = REGIONS) -> Plan:
    """Snapshot 0 (the bulk load, also its own first change batch) and `refreshes` change batches.

    Each batch deletes change/2 present orders, inserts change/2 new ones and moves `moves`
    customers to another region (a delete and an insert of the customer row). Snapshots are
    written for the oracle; the harness's arrays never enter the measured driver process.
    """
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    plan = Plan(root, refreshes)
    ids = np.arange(orders, dtype=np.int64)
    cust = rng.integers(0, customers, orders).astype(np.int32)
    cents = rng.integers(1, 10_000, orders).astype(np.int64)
    region = rng.integers(0, regions, customers).astype(np.int32)
    cids = np.arange(customers, dtype=np.int32)
    next_id = orders
    for k in range(refreshes + 1):
        if k == 0:
            od = _orders(ids, cust, cents, 1)
            cd = pa.table({"id": cids, "region": region, "w": np.ones(customers, np.int32)}, schema=CUSTOMER_CHANGE)
        else:
            gone = rng.choice(len(ids), change // 2, replace=False)
            new_ids = np.arange(next_id, next_id + change // 2, dtype=np.int64)
            next_id += change // 2
            new_cust = rng.integers(0, customers, change // 2).astype(np.int32)
            new_cents = rng.integers(1, 10_000, change // 2).astype(np.int64)
            od = pa.concat_tables([_orders(ids[gone], cust[gone], cents[gone], -1),
                                   _orders(new_ids, new_cust, new_cents, 1)])
            keep = np.ones(len(ids), bool)
            keep[gone] = False
            ids = np.concatenate([ids[keep], new_ids])
            cust = np.concatenate([cust[keep], new_cust])
            cents = np.concatenate([cents[keep], new_cents])
            moved = rng.choice(customers, moves, replace=False).astype(np.int32)
            to = ((region[moved] + rng.integers(1, regions, moves)) % regions).astype(np.int32)
            cd = pa.table({"id": np.concatenate([moved, moved]), "region": np.concatenate([region[moved], to]),
                           "w": np.concatenate([np.full(moves, -1, np.int32), np.ones(moves, np.int32)])},
                          schema=CUSTOMER_CHANGE)
            region[moved] = to
        pq.write_table(od, plan.orders_delta(k))
        pq.write_table(cd, plan.customers_delta(k))
        pq.write_table(_orders(ids, cust, cents, 1).drop(["w"]), plan.orders(k))
        pq.write_table(pa.table({"id": cids, "region": region}), plan.customers(k))
    return plan


# --- oracle -----------------------------------------------------------------------------------------------


def recompute(spark: SparkSession, plan: Plan, k: int) -> dict[int, tuple[int, int]]:
    """Spark SQL's answer on snapshot k: region -> (count, total cents)."""
    spark.read.parquet(str(plan.orders(k))).createOrReplaceTempView("orders")
    spark.read.parquet(str(plan.customers(k))).createOrReplaceTempView("customers")
    return {r["region"]: (r["n"], r["total"]) for r in spark.sql(VIEW).collect()}


def integrate(deltas: DataFrame) -> dict[int, tuple[int, int]]:
    """The view as the sum of its output changes (region, n, total, w): rows of net weight 1."""
    rows = deltas.groupBy("region", "n", "total").sum("w").withColumnRenamed("sum(w)", "w").filter("w != 0").collect()
    bad = [r for r in rows if r["w"] != 1]
    if bad:
        raise AssertionError(f"output rows with net weight other than 1: {bad[:5]}")
    return {r["region"]: (r["n"], r["total"]) for r in rows}


# --- metrics ----------------------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This (driver) Python process's peak resident set, MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def jvm_peak_rss_mb(spark: SparkSession) -> float:
    """The driver JVM's peak resident set (VmHWM), MiB; in local-cluster it also hosts master and workers."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def stage_bytes(spark: SparkSession) -> dict[str, int]:
    """Sums over all completed stages so far (take differences around a refresh): shuffle and input bytes."""
    url = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    if url is None:
        return {}
    with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages?status=complete", timeout=30) as r:
        stages = json.load(r)
    keys = ("shuffleWriteBytes", "shuffleReadBytes", "inputBytes", "outputBytes")
    return {k: sum(int(s.get(k, 0)) for s in stages) for k in keys}


def diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after}

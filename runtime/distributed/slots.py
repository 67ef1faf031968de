"""Tasks that run where they ran last time, so a bucket's state stays in one worker.

A Spark shuffle's reduce tasks go to whichever executor is free, and AQE merges a small
change's partitions into one or two tasks: a bucket's state then moves between Python
workers, and each move reads it again from storage. PySpark cannot name a task's
executor, but the scheduler sends a task to the executor that caches its partition.

So `Slots` caches a tiny RDD of one partition per task slot (at most one per bucket),
placed once over the executors, and runs every job of a refresh as a map over it: slot
i's task runs on the executor holding partition i, in the same reused Python worker
(the partition's iterator is drained, which lets PySpark reuse the worker), and takes
the buckets b with b mod n = i (`slot_buckets`). If an executor is lost, Spark recomputes its partition
on another one, which then keeps it: the buckets move once, and stay.

A job over the slots moves no rows through Spark: its tasks read and write the exchange
files (exchange.py) on the shared file system the state already needs.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pyspark import StorageLevel
from pyspark.sql import SparkSession

from dbspc.compiler.errors import InputError

R = TypeVar("R")
MARK = "<<dbspc-error>>"  # brackets a dbspc error's message inside Spark's task failure
_PLACEMENT_TRIES = 4


def raise_marked(e: BaseException) -> None:
    """Raise a dbspc error a task raised (marked) as itself; return if it is not one."""
    found = re.search(f"{MARK}(.*?){MARK}", str(e), flags=re.DOTALL)
    if found is not None:
        raise InputError(found.group(1)) from None


def slot_buckets(slot: int, slots: int, buckets: int) -> range:
    """The buckets whose tasks slot `slot` of `slots` runs."""
    return range(slot, buckets, slots)


def _where(rows: Iterable[int]) -> list[str]:
    """The executor this Python worker belongs to (its host and its daemon, or JVM), from
    a task that drains its partition, so that PySpark reuses the worker."""
    for _ in rows:
        pass
    return [f"{socket.gethostname()}:{os.getppid()}"]


class Slots:
    def __init__(self, spark: SparkSession, buckets: int) -> None:
        self.spark = spark
        self.buckets = buckets
        sc = spark.sparkContext
        self.n = max(1, min(buckets, sc.defaultParallelism))
        self._anchor: Any = None
        self.placement: list[str] = []  # per slot, the executor that holds it

    def _executors(self) -> int:
        sc = self.spark.sparkContext
        master = sc.master or ""
        if master.startswith("local[") or master == "local":
            return 1
        return max(1, len(sc._jsc.sc().statusTracker().getExecutorInfos()) - 1)  # less the driver

    def anchor(self) -> Any:
        """The cached RDD of the slots, spread over as many executors as it can be."""
        if self._anchor is None:
            sc = self.spark.sparkContext
            want = min(self.n, self._executors())
            for attempt in range(_PLACEMENT_TRIES):
                rdd = sc.parallelize(range(self.n), self.n).persist(StorageLevel.MEMORY_ONLY)
                self.placement = rdd.mapPartitions(_where).collect()
                if len(set(self.placement)) >= want or attempt == _PLACEMENT_TRIES - 1:
                    break  # spread, or as spread as the tries got: it stays cached either way
                rdd.unpersist()
            self._anchor = rdd
        return self._anchor

    def run(self, task: Callable[[int], R]) -> list[R]:
        """`task(slot)` in every slot's task, as one Spark job; the results by slot. A
        dbspc error a task raised marked is raised here as itself."""

        def part(slot: int, rows: Any) -> Any:
            for _ in rows:  # drained, so that PySpark reuses this worker
                pass
            yield task(slot)

        try:
            return list(self.anchor().mapPartitionsWithIndex(part).collect())
        except Exception as e:
            raise_marked(e)
            raise

"""Tasks that run where they ran last time, so a bucket's state stays in one worker.

A Spark shuffle's reduce tasks go to whichever executor is free, and AQE merges a small
change's partitions into one or two tasks: a bucket's state then moves between Python
workers, and each move reads it again from storage. PySpark cannot name a task's
executor, but the scheduler sends a task to the executor that caches its partition.

So `Slots` caches a tiny RDD of one partition per task slot (at most one per bucket),
placed once over the executors, and runs every job of a refresh as a map over it: slot
i's task runs on the executor holding partition i, in the same reused Python worker
(the partition's iterator is drained, which lets PySpark reuse the worker), and takes
the buckets b with b mod n = i (`slot_buckets`). If an executor is lost, Spark
recomputes its partition on another one, which then keeps it: the buckets move once,
and stay.

A job over the slots moves no rows through Spark: its tasks read and write the exchange
files (exchange.py) on the shared file system the state already needs.

`run_phases` runs several phases (a refresh's stages) in one job: a slot starts phase
p + 1 once every slot has marked phase p done, which it learns from the marker files.
A Spark job costs 0.1-0.2 s however little its tasks do, so this saves that much per
stage. It needs every slot's task running at once, which Spark does not promise (the
slots are at most the cores, but other jobs may hold some): a slot whose peers show no
sign of running (no heartbeat) for _PEER_WAIT seconds returns the phases it finished,
and the driver runs the job again; each slot resumes after its last marked phase. The
slots furthest behind can always go on, so every round makes progress.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pyspark import StorageLevel
from pyspark.sql import SparkSession

from dbspc.compiler.errors import InputError

R = TypeVar("R")
MARK = "<<dbspc-error>>"  # brackets a dbspc error's message inside Spark's task failure
_PLACEMENT_TRIES = 4
_PEER_WAIT = 3.0  # seconds a slot waits for peers that show no sign of running
_BEAT = 0.5  # seconds between a running slot's heartbeats


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

    def run_phases(self, phases: Sequence[Callable[[int], None]], where: Path) -> int:
        """`phases[p](slot)` in every slot, in order, each phase after every slot did the
        one before, in as few jobs as the cluster allows (one when all slots run at
        once); returns how many jobs it took. `where`: a fresh directory on the shared
        file system for the markers."""
        task = partial(_phased, list(phases), str(where), self.n)
        for rounds in range(1, len(phases) * self.n + 2):
            if min(self.run(task)) == len(phases):
                return rounds
        raise RuntimeError(f"the slots made no progress through {len(phases)} phases in {where}")


def _phased(phases: list[Callable[[int], None]], where: str, n: int, slot: int) -> int:
    """A slot's task of `run_phases`: the phases it has not marked done, each once every
    slot marked the one before; returns the phases done when it stopped."""
    root = Path(where)
    root.mkdir(parents=True, exist_ok=True)
    with _Heartbeat(_alive(root, slot)):
        for p, phase in enumerate(phases):
            if _done(root, p, slot).exists():  # by an earlier round (or attempt) of this refresh
                continue
            if p and not _await_peers(root, p - 1, n):
                return p
            phase(slot)
            _done(root, p, slot).touch()  # after the phase's files are all in place
    return len(phases)


def _done(root: Path, phase: int, slot: int) -> Path:
    """The marker of `slot` having done `phase`."""
    return root / f"p{phase}-s{slot}"


def _alive(root: Path, slot: int) -> Path:
    """The heartbeat file of `slot`'s running task."""
    return root / f"alive-s{slot}"


def _await_peers(root: Path, phase: int, n: int) -> bool:
    """Wait until every slot marked `phase` done; False if, for _PEER_WAIT seconds, none
    of those missing has beaten its heartbeat (it is not running: its core is taken)."""
    pause, idle_since = 0.001, time.monotonic()
    while True:
        missing = [i for i in range(n) if not _done(root, phase, i).exists()]
        if not missing:
            return True
        now = time.monotonic()
        if any(_beating(_alive(root, i)) for i in missing):
            idle_since = now
        elif now - idle_since > _PEER_WAIT:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.01)


def _beating(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime < 4 * _BEAT
    except FileNotFoundError:
        return False


class _Heartbeat:
    """Touches `path` every _BEAT seconds while a slot's task runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while True:
            self.path.touch()
            if self._stop.wait(_BEAT):
                return

    def __enter__(self) -> _Heartbeat:
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.path.unlink(missing_ok=True)

"""Exactly once across crashes: a job killed anywhere and restarted ends with exactly the
outputs of an uninterrupted run, refresh by refresh.

The job (tests/spark_crash_child.py) reads a change table with a weight column, one
with an operation column, an append-only table and a plain table, and maintains a
join + aggregate, a filter, a COUNT(DISTINCT) and a recursive view, each with its
change log. Compared with the uninterrupted run, after recovery: every view's contents,
every change-log row (row, weight, refresh id: nothing lost, nothing applied twice, no
refresh renumbered) and the absence of garbage (files of refreshes that never
committed, temporary files, unreferenced state).

- `test_killed_at_failpoints`: 10 runs of at least two kills each (at least 20 kills).
  The first kill is at a failpoint drawn uniformly from all the failpoints an
  uninterrupted run passes (every write, rename and commit of the protocol is one), the
  second one early in the restarted child (a crash during recovery itself), and a
  third, drawn from what is left of the run, usually hits the next restart. The children read the
  sources with pyarrow instead of Spark (the Engine protocol), so a kill costs a
  process start, not a Spark session.
- `test_killed_at_random_times`: `kill -9` at a random moment of the same child.
- `test_spark_job_killed`: `kill -9` of a child running the job on Spark, at a random
  moment after its session is up; the parent's Spark session finishes the job.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from dbspc.runtime.refresh import failpoints
from tests import spark_crash_child as child

CHILD = Path(__file__).with_name("spark_crash_child.py")
REPO = CHILD.parent.parent
SEED = 11
BATCHES = 6
SPARK_BATCHES = 3
RUNS = 10

# every test here starts and kills processes, some with a Spark session: minutes, so not in
# the developer loop (`pytest -m "not slow"`)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> child.Reference:
    return child.uninterrupted(tmp_path_factory.mktemp("reference"), BATCHES, SEED)


def _finish(proc: subprocess.Popen[str], timeout: float = 300) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


@pytest.mark.parametrize("run", range(RUNS))
def test_killed_at_failpoints(reference: child.Reference, tmp_path: Path, run: int) -> None:
    """At least two kills per run, at random failpoints; then the outputs are exact."""
    rng = random.Random(1000 + run)
    first = rng.randint(1, reference.failpoints)
    # Then early in the restarted child (recovery itself), then somewhere in what is left.
    plan = [first, rng.randint(1, 5), rng.randint(1, max(reference.failpoints - first, 1))]
    kills = 0
    for crash_after in [*plan, None]:
        code, log = _finish(child.spawn(tmp_path, BATCHES, SEED, crash_after))
        if code == failpoints.EXIT_CODE:
            kills += 1
            continue
        assert code == 0, log
        break
    assert kills >= 2
    assert child.outputs(tmp_path) == reference.outputs
    child.assert_clean(tmp_path)


@pytest.mark.parametrize("run", range(3))
def test_killed_at_random_times(reference: child.Reference, tmp_path: Path, run: int) -> None:
    """kill -9 by the clock, wherever the child happens to be."""
    rng = random.Random(2000 + run)
    proc = child.spawn(tmp_path, BATCHES, SEED)
    time.sleep(rng.uniform(1.0, 4.0))
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    code, log = _finish(child.spawn(tmp_path, BATCHES, SEED))
    assert code == 0, log
    assert child.outputs(tmp_path) == reference.outputs
    child.assert_clean(tmp_path)


@pytest.fixture(scope="module")
def spark_reference(tmp_path_factory: pytest.TempPathFactory) -> child.Reference:
    return child.uninterrupted(tmp_path_factory.mktemp("spark_reference"), SPARK_BATCHES, SEED)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("run", range(2))
def test_spark_job_killed(spark: Any, spark_reference: child.Reference, tmp_path: Path, run: int) -> None:
    """A Spark job killed with SIGKILL mid-run, finished by another Spark session, ends
    with the outputs (and change logs) of an uninterrupted run."""
    rng = random.Random(3000 + run)
    prefix = f"crash{run}"
    proc = child.spawn(tmp_path, SPARK_BATCHES, SEED, spark=prefix)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "ready": the session is up and the job started
    assert line.strip() == "ready", line + (proc.stderr.read() if proc.stderr else "")
    time.sleep(rng.uniform(0.5, 6.0))
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    job = child.spark_job(tmp_path, spark, prefix)
    try:
        child.run(job, tmp_path / "sources", SPARK_BATCHES, SEED)
    finally:
        job.close()
    assert child.outputs(tmp_path) == spark_reference.outputs
    child.assert_clean(tmp_path)

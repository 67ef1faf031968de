"""A refresh's stages as phases of one job over the slots (runtime/distributed/slots.py's
`run_phases`): no slot starts a phase before every slot finished the one before, and
when the slots cannot all run at once the job is run again until every phase is done."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dbspc.runtime.distributed import slots as slots_module
from dbspc.runtime.distributed.slots import Slots


class _Threads(Slots):
    """Every slot's task at once, in threads (as Spark runs them when cores are free)."""

    def __init__(self, n: int) -> None:  # no SparkSession
        self.n, self.jobs = n, 0

    def run(self, task: Any) -> list[Any]:
        self.jobs += 1
        found: dict[int, Any] = {}

        def slot(i: int) -> None:
            try:
                found[i] = task(i)
            except Exception as e:  # Spark fails the job with the task's error
                found[i] = e

        threads = [threading.Thread(target=slot, args=(i,)) for i in range(self.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for result in found.values():
            if isinstance(result, Exception):
                raise result
        return [found[i] for i in range(self.n)]


class _OneCore(_Threads):
    """One task at a time, slot after slot: the cluster's other cores are taken."""

    def run(self, task: Any) -> list[Any]:
        self.jobs += 1
        return [task(i) for i in range(self.n)]


def _phases(log: list[tuple[str, int, int]], count: int) -> list[Any]:
    def phase(p: int, slot: int) -> None:
        log.append(("start", p, slot))
        time.sleep(0.01 * (slot + 1))  # the slots finish at different times
        log.append(("end", p, slot))

    return [lambda slot, p=p: phase(p, slot) for p in range(count)]


def _in_order(log: list[tuple[str, int, int]], n: int, count: int) -> None:
    """Each (phase, slot) ran once, and every phase started after all of the one before ended."""
    assert sorted((p, s) for what, p, s in log if what == "end") == [(p, s) for p in range(count) for s in range(n)]
    for i, (what, p, _) in enumerate(log):
        if what == "start" and p:
            assert sum(1 for w, q, _ in log[:i] if w == "end" and q == p - 1) == n, log


def test_phases_run_in_one_job_when_every_slot_runs_at_once(tmp_path: Path) -> None:
    log: list[tuple[str, int, int]] = []
    slots = _Threads(3)
    assert slots.run_phases(_phases(log, 4), tmp_path / "phases") == 1
    _in_order(log, 3, 4)


def test_slots_that_cannot_run_at_once_take_more_jobs_and_still_keep_the_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slots_module, "_PEER_WAIT", 0.05)
    log: list[tuple[str, int, int]] = []
    slots = _OneCore(2)
    rounds = slots.run_phases(_phases(log, 3), tmp_path / "phases")
    _in_order(log, 2, 3)
    assert 1 < rounds == slots.jobs <= 3 * 2 + 1


def test_a_failed_phase_is_run_again_by_the_next_attempt_and_the_done_ones_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slots_module, "_PEER_WAIT", 0.05)
    log: list[tuple[str, int, int]] = []
    phases = _phases(log, 3)
    failing, failed = phases[1], []

    def fail_once(slot: int) -> None:
        if slot == 1 and not failed:
            failed.append(slot)
            raise RuntimeError("executor lost")
        failing(slot)

    phases[1] = fail_once
    slots = _Threads(2)
    with pytest.raises(RuntimeError, match="executor lost"):
        slots.run_phases(phases, tmp_path / "phases")
    assert slots.run_phases(phases, tmp_path / "phases") == 1  # Spark's retry of the task, say
    ends = [(p, s) for w, p, s in log if w == "end"]
    assert sorted(ends) == [(p, s) for p in range(3) for s in range(2)]  # phase 0 was not run again

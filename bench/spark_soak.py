"""Soak test of exactly-once recovery: many more kills than the test suite runs.

    .venv/bin/python bench/spark_soak.py [--trials 100] [--batches 8] [--spark-trials 3] [--workers 2]

Each trial runs the crash-test job (tests/spark_crash_child.py: four source kinds, four
views with change logs) in child processes with a fresh seed, killing children until
one finishes, then compares every view's contents and change log with an uninterrupted
run of the same seed and checks that no garbage is left. A kill is either at a random
failpoint (DBSPC_CRASH_AFTER, drawn over the whole protocol) or a SIGKILL at a random
moment; each trial kills 1 to 4 times, and restarts can be killed during recovery.
`--spark-trials` adds trials whose children run the job on a local Spark session
(about a minute each: every restart starts a session). Prints one line per trial and
a summary; exits non-zero on any mismatch.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dbspc.runtime.refresh import failpoints
from tests import spark_crash_child as child


def reference(work: Path, batches: int, seed: int) -> child.Reference:
    """An uninterrupted run, in a child process (the failpoint count is per process)."""
    proc = child.spawn(work, batches, seed)
    out, err = proc.communicate(timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"uninterrupted run failed:\n{out}{err}")
    count = json.loads(out.strip().splitlines()[-1])["failpoints"]
    return child.Reference(int(count), child.outputs(work))


def trial(index: int, seed: int, batches: int, spark: bool, root: Path) -> tuple[int, int, str]:
    """One trial: returns (kills, failpoint kills, error or "")."""
    rng = random.Random(seed * 7919 + index)
    work = root / f"trial{index:04d}"
    expected = reference(root / f"reference{index:04d}", batches, seed)
    kills = point_kills = 0
    try:
        for attempt in range(rng.randint(1, 4) + 1):
            last = attempt > 0 and kills >= 1 and rng.random() < 0.25
            by_clock = spark or rng.random() < 0.3
            crash_after = None
            if not last and not by_clock:
                crash_after = rng.randint(1, expected.failpoints)
            proc = child.spawn(work, batches, seed, crash_after, spark=f"soak{index}" if spark else None)
            if not last and by_clock:
                if spark and proc.stdout is not None:
                    proc.stdout.readline()  # "ready"
                time.sleep(rng.uniform(0.2, 8.0 if spark else 3.0))
                proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=900)
            if proc.returncode in (failpoints.EXIT_CODE, -signal.SIGKILL):
                kills += 1
                point_kills += proc.returncode == failpoints.EXIT_CODE
                continue
            if proc.returncode != 0:
                return kills, point_kills, f"child failed ({proc.returncode}):\n{out}{err}"
            break
        else:
            proc = child.spawn(work, batches, seed, spark=f"soak{index}" if spark else None)
            out, err = proc.communicate(timeout=900)
            if proc.returncode != 0:
                return kills, point_kills, f"child failed ({proc.returncode}):\n{out}{err}"
        if child.outputs(work) != expected.outputs:
            return kills, point_kills, "outputs differ from the uninterrupted run"
        child.assert_clean(work)
        return kills, point_kills, ""
    except Exception:
        return kills, point_kills, traceback.format_exc()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(root / f"reference{index:04d}", ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--spark-trials", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="dbspc-soak-"))
    print(f"seed {args.seed}; {args.trials} file-engine trials, {args.spark_trials} Spark trials", flush=True)
    started = time.perf_counter()
    jobs = [(i, args.seed + i, False) for i in range(args.trials)]
    jobs += [(args.trials + i, args.seed + args.trials + i, True) for i in range(args.spark_trials)]
    failures = total = points = 0
    with ThreadPoolExecutor(args.workers) as pool:
        futures = [pool.submit(trial, i, seed, args.batches, spark, root) for i, seed, spark in jobs]
        for (i, seed, spark), future in zip(jobs, futures, strict=True):
            kills, point_kills, error = future.result()
            total += kills
            points += point_kills
            status = "ok" if not error else "FAILED"
            print(f"trial {i:4d} seed {seed} {'spark' if spark else 'files'}: {kills} kill(s): {status}", flush=True)
            if error:
                failures += 1
                print(error, flush=True)
    elapsed = time.perf_counter() - started
    print(
        f"\n{len(jobs)} trials, {total} kills ({points} at failpoints, {total - points} by SIGKILL), "
        f"{failures} failure(s), {elapsed:.0f} s"
    )
    shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

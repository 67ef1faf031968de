"""The distributed mode on Spark (runtime/distributed/spark_stages.py), on the shared
local session: after every refresh each view's delta equals the driver's Pipeline's,
for every operator kind (the program of test_random_streams.py), under random inserts
and deletes; a refresh that fails changes nothing; a restart from the state on storage
continues exactly. tests/test_distributed_cluster.py runs the same on two executor JVMs.
"""

from __future__ import annotations

import json
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from dbspc.compiler.errors import InputError
from dbspc.runtime.distributed.spark_stages import SparkStages
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet
from tests.distributed_driver import PROGRAM as ORDERS
from tests.test_random_streams import Step, as_zsets, change_streams, compiled

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

Row = tuple[Any, ...]




def frame(spark: Any, p: Pipeline, table: str, changes: list[tuple[Row, int]]) -> Any:
    cols = [f"`{c}` {t.sql()}" for c, t in zip(p.table_columns(table), p.table_types(table), strict=True)]
    return spark.createDataFrame([(*r, w) for r, w in changes], ", ".join([*cols, "_weight BIGINT"]))


def collected(df: Any) -> list[Row]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def expected(delta: ZSet) -> list[Row]:
    return sorted(((*r, w) for r, w in delta.to_rows()), key=repr)


def order_changes(rng: random.Random, present: dict[int, Row], next_id: list[int], size: int) -> list[tuple[Row, int]]:
    changes: list[tuple[Row, int]] = []
    for key in rng.sample(sorted(present), min(size // 4, len(present))):
        changes.append((present.pop(key), -1))
    for _ in range(size):
        next_id[0] += 1
        row = (next_id[0], rng.randrange(12), Decimal(rng.randrange(100_000)) / 100)
        present[next_id[0]] = row
        changes.append((row, 1))
    return changes


def customer_changes(rng: random.Random, present: dict[int, Row]) -> list[tuple[Row, int]]:
    changes: list[tuple[Row, int]] = []
    for cid in rng.sample(range(14), 4):
        if cid in present:
            changes.append((present.pop(cid), -1))
        if rng.random() < 0.7:
            present[cid] = (cid, rng.choice(["north", "south", "east", "west", None]))
            changes.append((present[cid], 1))
    return changes


def test_a_join_under_a_group_by_refreshes_like_the_driver(spark: Any, tmp_path: Path) -> None:
    driver = Pipeline.from_sql(ORDERS)
    columns = {v: driver.view_columns(v) for v in driver.view_names()}
    stages = SparkStages(spark, driver.circuit, tmp_path / "state", buckets=4, columns=columns)
    rng = random.Random(7)
    orders: dict[int, Row] = {}
    customers: dict[int, Row] = {}
    next_id = [0]
    for refresh in range(1, 5):
        step = {"orders": order_changes(rng, orders, next_id, 40), "customers": customer_changes(rng, customers)}
        result = stages.refresh({t: frame(spark, driver, t, ch) for t, ch in step.items()})
        want = driver.step(
            {t: ZSet.from_rows([r for r, _ in ch], driver.table_types(t), [w for _, w in ch]) for t, ch in step.items()}
        )
        assert result.refresh == refresh == stages.committed
        for view, delta in want.items():
            assert collected(result.deltas[view]) == expected(delta), f"refresh {refresh}, view {view}"
            assert result.deltas[view].columns == [*driver.view_columns(view), "_dbspc_weight"]


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(stream=change_streams(max_steps=3))
def test_every_operator_kind_refreshes_like_the_driver(spark: Any, stream: list[Step]) -> None:
    """Joins (equi, theta, cross), set operations, DISTINCT, every aggregate, windows and
    top-k, over random inserts and deletes (streams of test_random_streams)."""
    driver = Pipeline(compiled(True))
    stages = SparkStages(spark, driver.circuit, tempfile.mkdtemp(prefix="dbspc-dist-"), buckets=3)
    for number, step in enumerate(stream, start=1):
        result = stages.refresh({t: frame(spark, driver, t, ch) for t, ch in step.items()})
        want = driver.step(as_zsets(driver, step))
        for view, delta in want.items():
            assert collected(result.deltas[view]) == expected(delta), f"refresh {number}, view {view}"
    shutil.rmtree(stages.root)


def test_a_failed_refresh_changes_nothing_and_a_restart_continues_from_storage(spark: Any, tmp_path: Path) -> None:
    program = """
    CREATE TABLE t (k INT, v BIGINT);
    CREATE VIEW s AS SELECT k, SUM(v) AS total, COUNT(*) AS n FROM t GROUP BY k;
    """
    driver = Pipeline.from_sql(program)
    stages = SparkStages(spark, driver.circuit, tmp_path / "state", buckets=2)
    first = [((k, 2**62), 1) for k in range(4)]
    stages.refresh({"t": frame(spark, driver, "t", first)})
    driver.step({"t": ZSet.from_rows([r for r, _ in first], driver.table_types("t"))})
    overflow = [((1, 2**62), 1)]  # 2^62 + 2^62 overflows BIGINT: Spark's ANSI error
    with pytest.raises(InputError, match="overflow"):
        stages.refresh({"t": frame(spark, driver, "t", overflow)})
    assert stages.committed == 1
    # a new driver over a copy of the state: every bucket is read back from storage
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "state", moved)
    restarted = SparkStages(spark, driver.circuit, moved, buckets=2)
    later = [((1, 5), 1), ((2, 2**62), -1), ((9, 1), 1)]
    result = restarted.refresh({"t": frame(spark, driver, "t", later)})
    want = driver.step(
        {"t": ZSet.from_rows([r for r, _ in later], driver.table_types("t"), [w for _, w in later])}
    )
    assert result.refresh == 2
    assert collected(result.deltas["s"]) == expected(want["s"])
    # k=1 and k=2 retracted; k=1 and k=9 inserted
    assert Counter(r[-1] for r in collected(result.deltas["s"])) == Counter({1: 2, -1: 2})


def test_each_task_reports_what_it_read_computed_and_holds(spark: Any, tmp_path: Path) -> None:
    driver = Pipeline.from_sql(ORDERS)
    stages = SparkStages(spark, driver.circuit, tmp_path / "state", buckets=2)
    rng, orders, next_id = random.Random(2), {}, [0]
    result = stages.refresh({"orders": frame(spark, driver, "orders", order_changes(rng, orders, next_id, 50))})
    facts = result.metrics()
    assert {(m["stage"], m["bucket"]) for m in facts} >= {(1, 0), (1, 1)}
    assert sum(m["input_rows"] for m in facts if m["stage"] == 1) >= 50
    assert sum(m["state_rows"] for m in facts) > 0 and all(m["state_read_bytes"] == 0 for m in facts)
    assert all(m["state_written_bytes"] > 0 for m in facts if m["state_rows"])


def _kill_during_refresh_2(
    command: Callable[[Path], list[str]], tmp_path: Path, rng: random.Random
) -> list[dict[str, Any]]:
    """Random steps (the last deleting every row) written to a JSON file, then the driver
    `command(that file)` run and killed with -9 somewhere inside refresh 2, then run
    again to the end."""
    orders: dict[int, Row] = {}
    customers: dict[int, Row] = {}
    next_id = [0]
    steps: list[dict[str, list[tuple[Row, int]]]] = []
    for _ in range(3):
        steps.append({"orders": order_changes(rng, orders, next_id, 30), "customers": customer_changes(rng, customers)})
    steps.append({"orders": [(r, -1) for r in orders.values()], "customers": [(r, -1) for r in customers.values()]})
    steps_file = tmp_path / "steps.json"
    steps_file.write_text(json.dumps([{t: [[[str(v) if isinstance(v, Decimal) else v for v in r], w]
                                           for r, w in ch] for t, ch in s.items()} for s in steps]))
    child = subprocess.Popen(command(steps_file), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    out, lines = child.stdout, queue.Queue[tuple[str, float]]()

    def read() -> None:  # each line the child prints, with when it came
        for line in out:
            lines.put((line.strip(), time.monotonic()))

    threading.Thread(target=read, daemon=True).start()
    seen: dict[str, float] = {}
    while "refreshing 2" not in seen:
        line, at = lines.get(timeout=600)
        seen[line] = at
    # Somewhere inside refresh 2's jobs: a random part of refresh 1's time (which, on a
    # cold JVM, is the longer one); at the latest as refresh 2 commits, so that the kill
    # always lands before the last refresh however fast the refreshes are.
    deadline = seen["refreshing 2"] + rng.uniform(0.05, 0.95) * (seen["committed 1"] - seen["refreshing 1"])
    while (left := deadline - time.monotonic()) > 0:
        try:
            if lines.get(timeout=left)[0] == "committed 2":
                break
        except queue.Empty:
            break
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    subprocess.run(command(steps_file), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return steps


def test_a_driver_killed_mid_refresh_resumes_exactly(tmp_path: Path) -> None:
    """kill -9 of the driver process in the middle of refresh 2; a new driver resumes
    from the committed refresh. Every refresh whose deltas were reported equals the
    driver-mode Pipeline's, the last one deleting every row (so it retracts each view's
    whole contents: the state after the crash is exact, not just its later changes)."""
    driver_py = str(Path(__file__).parent / "distributed_driver.py")
    steps = _kill_during_refresh_2(
        lambda steps: [sys.executable, driver_py, str(tmp_path / "state"), str(steps), str(tmp_path)],
        tmp_path,
        random.Random(4),
    )

    driver = Pipeline.from_sql(ORDERS)
    reported = 0
    for k, step in enumerate(steps, start=1):
        want = driver.step(
            {t: ZSet.from_rows([r for r, _ in ch], driver.table_types(t), [w for _, w in ch]) for t, ch in step.items()}
        )
        got_file = tmp_path / f"deltas-{k}.json"
        if not got_file.exists():
            continue  # committed, but killed before reporting it
        got = json.loads(got_file.read_text())
        for view, delta in want.items():
            expect = sorted(([str(x) for x in (*r, w)] for r, w in delta.to_rows()), key=repr)
            assert got[view] == expect, f"refresh {k}, view {view}"
        reported += 1
    assert reported >= 3 and (tmp_path / f"deltas-{len(steps)}.json").exists()


def test_a_distributed_pipeline_killed_mid_refresh_resumes_exactly(tmp_path: Path) -> None:
    """kill -9 of a SparkPipeline's driver (execution="distributed") in the middle of
    refresh 2; a new driver resumes. Each view's change log holds, per refresh, exactly
    driver mode's delta of that step (nothing twice, nothing lost), and its table equals
    the integrated deltas, down to the last step deleting every row."""
    import pyarrow.dataset as ds

    driver_py = str(Path(__file__).parent / "distributed_pipeline_driver.py")
    steps = _kill_during_refresh_2(
        lambda steps: [sys.executable, driver_py, str(tmp_path), str(steps)], tmp_path, random.Random(9)
    )

    driver = Pipeline.from_sql(ORDERS)
    wants = [
        driver.step({t: ZSet.from_rows([r for r, _ in ch], driver.table_types(t), [w for _, w in ch])
                     for t, ch in step.items()})
        for step in steps
    ]
    published = json.loads((tmp_path / "out" / "_published.json").read_text())
    assert published["refresh_id"] == len(steps)
    for view in ("revenue", "regions", "per_customer"):
        got: dict[int, Counter[Row]] = {}
        for r in ds.dataset(tmp_path / "out" / view / "changes", format="parquet").to_table().to_pylist():
            k, sign = r.pop("_commit_version"), 1 if r.pop("_change_type") == "insert" else -1
            r.pop("_commit_timestamp")
            got.setdefault(k, Counter())[tuple(r.values())] += sign
        for k, want in enumerate(wants, start=1):
            expect = Counter(dict(want[view].to_rows()))
            assert got.get(k, Counter()) == expect, f"refresh {k}: view {view}'s logged changes"
        table = ds.dataset(tmp_path / "out" / published["views"][view]["version"], format="parquet").to_table()
        assert table.num_rows == 0, f"{view}: the last step deleted every row"

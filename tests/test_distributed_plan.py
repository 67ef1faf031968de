"""The distributed plan (runtime/distributed/): a circuit split into stages by key and
run once per bucket gives exactly the driver's deltas.

The in-process runner (local.py) moves rows between stages with the same bucketing as
Spark's shuffle would, so these tests check the split itself: every golden script, and
random change streams through the program of test_random_streams.py, with 1 to 4
buckets, against the driver's Pipeline, step by step.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbspc.compiler.compile import compile_sql
from dbspc.compiler.frontend.script_split import split_script
from dbspc.runtime.distributed.buckets import bucket_of
from dbspc.runtime.distributed.local import BucketedExecutor
from dbspc.runtime.distributed.plan import SINGLE, Check, Part, hashed, meets, plan
from dbspc.runtime.pipeline import Pipeline, _operator_views
from dbspc.runtime.script import step_changes
from dbspc.runtime.zset import ZSet
from tests.stepcheck import comparable_rows
from tests.test_random_streams import Step, as_zsets, change_streams, compiled

REPO = Path(__file__).resolve().parent.parent
CASES = sorted((REPO / "sql_tests").glob("*.sql"))


def _bucketed(p: Pipeline, buckets: int) -> BucketedExecutor:
    return BucketedExecutor(p.circuit, buckets, _operator_views(p.circuit))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_every_golden_runs_bucketed_with_the_drivers_deltas(path: Path) -> None:
    script = split_script(path.read_text())
    driver = Pipeline.from_sql(script.program)
    bucketed = _bucketed(driver, 3)
    for number, text in enumerate(script.steps, start=1):
        changes = step_changes(driver, text)
        want = driver.step(changes)
        got = bucketed.step({t: z.consolidate() for t, z in changes.items()})
        for view, delta in want.items():
            assert comparable_rows(got[view]) == comparable_rows(delta), f"step {number}, view {view}"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=change_streams(max_steps=4), buckets=st.integers(1, 4))
def test_random_streams_run_bucketed_with_the_drivers_deltas(stream: list[Step], buckets: int) -> None:
    driver = Pipeline(compiled(True))
    bucketed = _bucketed(driver, buckets)
    for number, step in enumerate(stream, start=1):
        changes = as_zsets(driver, step)
        want = driver.step(changes)
        got = bucketed.step({t: z.consolidate() for t, z in changes.items()})
        for view, delta in want.items():
            assert comparable_rows(got[view]) == comparable_rows(delta), f"step {number}, view {view}"


ORDERS = """
CREATE TABLE customers (id INT, region STRING);
CREATE TABLE orders (id BIGINT, customer_id INT, amount DECIMAL(10,2));
CREATE VIEW revenue AS
  SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
  FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region;
"""


def test_a_join_under_a_group_by_is_two_stages_and_two_shuffles_of_its_inputs() -> None:
    p = plan(compile_sql(ORDERS).circuit)
    text = p.dump()
    assert text.startswith("-- distributed plan: 2 stage(s), 3 channel(s)\n")
    # both tables are moved by the join key once; the join's change by region once
    assert "ch0 = %0 moved by hash(#1)" in text and "ch1 = %1 moved by hash(#0)" in text
    assert "moved by hash(#0)" in text.split("stage 1:")[0]
    assert plan(compile_sql(ORDERS).circuit).dump() == text  # deterministic


def test_a_table_read_by_one_key_is_checked_in_the_stage_that_reads_it() -> None:
    """Its share is kept by that key, so its rows move once and stage 0 has no job; a
    table read by two keys (customers: by id for the join, by region for DISTINCT) or
    only by a global operator is checked by the whole row in stage 0."""
    p = plan(compile_sql(ORDERS).circuit)
    assert p.checks["orders"] == Check(1, hashed([1]), ((0, hashed([1])),))
    assert p.checks["customers"].stage == 1 and not p.checked_in(0)
    assert "stage 0" not in p.dump() and "  check orders against its share by hash(#1) -> ch0" in p.dump()
    both = ORDERS + "CREATE VIEW regions AS SELECT DISTINCT region FROM customers;\n"
    both += "CREATE VIEW total AS SELECT SUM(amount) AS s FROM orders;\n"
    q = plan(compile_sql(both).circuit)
    assert q.checked_in(0) == ["customers", "orders"]
    assert q.checks["customers"].share == hashed([0, 1])


def test_a_recursive_view_runs_in_bucket_zero() -> None:
    program = """
    CREATE TABLE e (s INT, d INT);
    CREATE VIEW reach AS WITH RECURSIVE r(s, d) AS (
      SELECT s, d FROM e UNION SELECT r.s, e.d FROM r JOIN e ON r.d = e.s) SELECT * FROM r;
    """
    p = plan(compile_sql(program).circuit)
    scope = next(n for n in p.part if p.circuit[n].kind == "scope_incremental")
    assert p.part[scope] == SINGLE and p.single(scope)


def test_partitionings_meet_by_subsets_of_a_key_but_traces_need_their_own_key() -> None:
    assert meets(hashed([1]), hashed([0, 1]), exact=False)
    assert not meets(hashed([1]), hashed([0, 1]), exact=True)
    assert meets(SINGLE, hashed([3]), exact=True)
    assert not meets(Part("any"), hashed([0]), exact=False)


def test_equal_keys_of_different_numeric_types_share_a_bucket() -> None:
    from dbspc.compiler.types import SqlType

    ints = ZSet.from_rows([(i,) for i in range(200)], (SqlType("INT"),))
    longs = ZSet.from_rows([(i,) for i in range(200)], (SqlType("BIGINT"),))
    decimals = ZSet.from_rows([(Decimal(i),) for i in range(200)], (SqlType("DECIMAL", precision=12, scale=2),))
    a, b, c = (bucket_of(z, hashed([0]), 7) for z in (ints, longs, decimals))
    assert (a == b).all() and (a == c).all() and len(set(a.tolist())) == 7


def test_buckets_are_the_same_in_another_process() -> None:
    """Executors compute buckets in their own Python workers."""
    code = (
        "from dbspc.runtime.distributed.buckets import bucket_of\n"
        "from dbspc.runtime.distributed.plan import Check, hashed\n"
        "from dbspc.runtime.zset import ZSet\n"
        "from dbspc.compiler.types import SqlType\n"
        "z = ZSet.from_rows([(i, str(i)) for i in range(50)], (SqlType('INT'), SqlType('STRING')))\n"
        "print(bucket_of(z, hashed([0, 1]), 5).tolist())\n"
    )
    from dbspc.compiler.types import SqlType

    here = ZSet.from_rows([(i, str(i)) for i in range(50)], (SqlType("INT"), SqlType("STRING")))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == str(bucket_of(here, hashed([0, 1]), 5).tolist())

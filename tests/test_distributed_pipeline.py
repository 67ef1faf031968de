"""SparkPipeline(execution="distributed"): the refresh protocol of driver mode with the
step, the state and the view writes on the executors (runtime/distributed/pipeline_job.py).

The program is test_spark_pipeline's: change tables with weight and op columns, an
append-only table and a plain table, feeding a join + aggregate, a bag projection, an
aggregate over every type, a global aggregate and a recursive view. After each refresh
every view, read back from Spark, equals Spark SQL's recompute and the same job run in
driver mode, and its change log sums to its contents.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from dbspc.compiler.errors import InputError, UsageError
from dbspc.runtime.distributed import view_tables
from dbspc.runtime.spark import SparkPipeline
from tests.test_spark_pipeline import (
    BATCHES,
    ORDERS,
    Expected,
    _day,
    _sources,
    _write_batch,
    check_views,
    spark_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _job(spark: Any, root: Path, src: Any, **options: Any) -> SparkPipeline:
    from tests.test_spark_pipeline import VIEWS

    options.setdefault("publish", False)
    job = SparkPipeline(spark, root / "ckpt", output=root / "out", change_log=True, **options)
    job.change_table("orders", source=src.name("orders"), offset="v", weight="w")
    job.append_table("customers", source=src.name("customers"), offset="batch")
    job.change_table("events", source=src.name("events"), offset="lsn", op="op")
    job.plain_table("edges", source=src.name("edges"))
    for v in VIEWS:
        job.view(v)
    return job


def _logs(job: SparkPipeline) -> dict[str, Any]:
    return {v: spark_rows(job.changes(v).drop("_commit_timestamp")) for v in job.pipeline.view_names()}


@pytest.mark.parametrize("views_written", ["over the slots", "through a shuffle"])
def test_distributed_equals_driver_mode_and_spark(
    spark: Any, tmp_path: Path, views_written: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if views_written == "through a shuffle":  # the path of large deltas (view_tables.py)
        monkeypatch.setattr(view_tables, "_SMALL", -1)
    src = _sources(spark, tmp_path)
    dist = _job(spark, tmp_path / "dist", src, execution="distributed", buckets=3)
    driver = _job(spark, tmp_path / "driver", src)
    expected = Expected()
    for i, batch in enumerate(BATCHES):
        _write_batch(src, i, batch)
        expected.apply(batch)
        got, want = dist.refresh(), driver.refresh()
        assert got.committed and got.refresh_id == want.refresh_id == i + 1
        assert got.rows_read == want.rows_read
        assert {v: n for v, n in got.rows_out.items() if n} == {v: n for v, n in want.rows_out.items() if n}
        check_views(spark, dist, expected, f"distributed refresh {i + 1}", logs=i == len(BATCHES) - 1)
        for view in driver.pipeline.view_names():
            assert spark_rows(dist.table(view)) == spark_rows(driver.table(view)), view
        # The offsets and the checks' hash sums, found by the jobs sending the changes,
        # are driver mode's, found by reading them into the driver.
        recorded = [json.loads((tmp_path / m / "ckpt" / "MANIFEST.json").read_text()) for m in ("dist", "driver")]
        dist_found, driver_found = ((r["offsets"], r["checks"]) for r in recorded)
        assert dist_found == driver_found
        # A small change's views are written by the stages' job itself, in its last phase.
        written = tmp_path / "dist" / "ckpt" / "distributed" / "x" / f"r{i + 1:08d}" / view_tables.WRITTEN
        assert len(list(written.glob("s*.json"))) == (0 if views_written == "through a shuffle" else 2)
        # Each delta, a DataFrame with the view's columns and its weight.
        delta = got.deltas["order_count"]
        assert delta.columns == ["n", "_dbspc_weight"]
    assert _logs(dist) == _logs(driver)
    assert dist.refresh().committed is False
    manifest = json.loads((tmp_path / "dist" / "ckpt" / "MANIFEST.json").read_text())
    circuit = dist.pipeline.circuit_digest()
    meta = {"buckets": 3, "circuit": circuit, "layout": 2}
    assert manifest["state"] == {} and manifest["pipeline"] == {"distributed": meta}
    dist.close()
    driver.close()

    # A restarted distributed job resumes on the executors' state.
    dist = _job(spark, tmp_path / "dist", src, execution="distributed", buckets=3)
    assert dist.refresh_id == len(BATCHES)
    more: dict[str, list[tuple[Any, ...]]] = {
        "orders": [(6, 20, Decimal("3.00"), _day(9), "z", 1)],
        "customers": [],
        "events": [],
        "edges": [(5, 6), (6, 1)],
    }
    _write_batch(src, 3, more)
    expected.apply(more)
    assert dist.refresh().refresh_id == len(BATCHES) + 1
    check_views(spark, dist, expected, "distributed, after a restart")
    dist.close()

    # The checkpoint is the distributed mode's own.
    with pytest.raises(UsageError, match="written by a distributed job"):
        _job(spark, tmp_path / "dist", src).refresh()
    with pytest.raises(UsageError, match="buckets=3"):
        _job(spark, tmp_path / "dist", src, execution="distributed", buckets=4).refresh()
    with pytest.raises(UsageError, match="written in driver mode"):
        _job(spark, tmp_path / "driver", src, execution="distributed", buckets=3).refresh()
    with pytest.raises(UsageError, match="execution must be one of driver, distributed"):
        SparkPipeline(spark, tmp_path / "x", execution="cluster")


def test_distributed_bad_input_changes_nothing(spark: Any, tmp_path: Path) -> None:
    """A delete of a row that is not there (checked in the buckets of stage 0), an
    unknown operation and a NULL offset: an error naming the table, nothing committed,
    and the next refresh applies on the state from before."""
    from tests.test_spark_pipeline import EVENTS, _at

    src = _sources(spark, tmp_path)
    job = _job(spark, tmp_path, src, execution="distributed", buckets=2)
    expected = Expected()
    _write_batch(src, 0, BATCHES[0])
    expected.apply(BATCHES[0])
    job.refresh()
    manifest = (tmp_path / "ckpt" / "MANIFEST.json").read_bytes()
    outputs = {v: spark_rows(job.table(v)) for v in job.pipeline.view_names()}

    def unchanged() -> None:
        assert (tmp_path / "ckpt" / "MANIFEST.json").read_bytes() == manifest
        assert {v: spark_rows(job.table(v)) for v in job.pipeline.view_names()} == outputs
        assert job.refresh_id == 1

    def table(schema: pa.Schema, rows: list[tuple[Any, ...]]) -> pa.Table:
        return pa.table({f.name: [r[j] for r in rows] for j, f in enumerate(schema)}, schema=schema)

    bad = src.add("orders", table(ORDERS, [(77, 10, Decimal("1.00"), _day(1), "x", -1, 101)]))
    with pytest.raises(InputError) as err:
        job.refresh()
    message = str(err.value)
    assert "cannot delete 1 row(s) from table 'orders'" in message and "id=77" in message, message
    unchanged()
    bad.unlink()

    bad = src.add("events", table(EVENTS, [(9, 1.0, _at(1), 1, 1.0, "upsert", 1001)]))
    with pytest.raises(InputError, match=r"table 'events'.*column 'op'.*'upsert'"):
        job.refresh()
    unchanged()
    bad.unlink()

    bad = src.add("orders", table(ORDERS, [(78, 10, Decimal("1.00"), _day(1), "x", 1, None)]))
    with pytest.raises(InputError, match=r"table 'orders'.*NULL offset in column 'v'"):
        job.refresh()
    unchanged()
    bad.unlink()

    _write_batch(src, 1, BATCHES[1])
    expected.apply(BATCHES[1])
    assert job.refresh().refresh_id == 2
    check_views(spark, job, expected, "distributed, after the fixes", logs=False)
    job.close()

    # state kept for another compilation of the same views (another dbspc) is refused
    path = tmp_path / "ckpt" / "MANIFEST.json"
    written = json.loads(path.read_text())
    assert written["pipeline"]["distributed"]["circuit"]
    written["pipeline"]["distributed"]["circuit"] = "0" * 16
    path.write_text(json.dumps(written))
    with pytest.raises(UsageError, match="compiled to another circuit"):
        _job(spark, tmp_path, src, execution="distributed", buckets=2).refresh()

    # and so is state spread over the buckets the way an older dbspc spread it
    written["pipeline"]["distributed"]["circuit"] = _job(spark, tmp_path / "x", src).pipeline.circuit_digest()
    del written["pipeline"]["distributed"]["layout"]
    path.write_text(json.dumps(written))
    with pytest.raises(UsageError, match="bucket layout 1, now 2"):
        _job(spark, tmp_path, src, execution="distributed", buckets=2).refresh()

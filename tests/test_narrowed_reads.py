"""A change table's rows above the committed offset are read from the files added since
the last refresh, not from every file (runtime/spark/engine.py's `_narrowed`, given the
files by runtime/refresh/job.py's `_read`): only when the source is a bare scan of
parquet files, and with the relation's own schema and options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dbspc.runtime.spark import SparkPipeline
from dbspc.runtime.spark.engine import _narrowed

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def _batch(path: Path, ids: list[int], v: int) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([v] * len(ids), pa.int64())}), path)
    return path.as_uri()


def _ids(df: Any) -> list[int]:
    return sorted(r["id"] for r in df.collect())


def test_a_bare_parquet_scan_is_read_from_the_given_files(spark: Any, tmp_path: Path) -> None:
    first = _batch(tmp_path / "t" / "b0.parquet", [1, 2], 0)
    second = _batch(tmp_path / "t" / "b1.parquet", [3], 1)
    spark.read.option("datetimeRebaseMode", "CORRECTED").parquet(str(tmp_path / "t")).createOrReplaceTempView("nr_t")
    df = spark.table("nr_t")
    assert sorted(df.inputFiles()) == [first, second]
    narrowed = _narrowed(spark, df, [second])
    assert narrowed is not None and narrowed.schema == df.schema
    assert _ids(narrowed) == [3]
    options = narrowed._jdf.queryExecution().optimizedPlan().relation().options()
    assert options.get("datetimerebasemode").get() == "CORRECTED"  # the relation's options carry over
    nothing = _narrowed(spark, df, [])
    assert nothing is not None and _ids(nothing) == []


def test_anything_but_a_bare_scan_is_read_whole(spark: Any, tmp_path: Path) -> None:
    _batch(tmp_path / "t" / "b0.parquet", [1, 2], 0)
    added = _batch(tmp_path / "t" / "b1.parquet", [3], 1)
    scan = spark.read.parquet(str(tmp_path / "t"))
    assert _narrowed(spark, scan.where("id > 1"), [added]) is None  # the filter would be lost
    assert _narrowed(spark, scan.selectExpr("id AS x", "v"), [added]) is None  # and the renaming
    assert _narrowed(spark, scan.join(scan.select("id"), "id"), [added]) is None
    assert _narrowed(spark, spark.range(3), [added]) is None  # not a file relation
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "b.json").write_text('{"id": 1, "v": 0}\n')
    as_json = spark.read.schema("id BIGINT, v BIGINT").json(str(tmp_path / "j"))
    assert _narrowed(spark, as_json, as_json.inputFiles()) is None  # not Spark's parquet format
    _batch(tmp_path / "p" / "day=1" / "b.parquet", [4], 2)
    partitioned = spark.read.parquet(str(tmp_path / "p"))
    assert _narrowed(spark, partitioned, partitioned.inputFiles()) is None  # `day` is in the path only


def test_a_file_whose_uri_is_not_its_path_is_read_whole(spark: Any, tmp_path: Path) -> None:
    spaced = _batch(tmp_path / "t" / "b 1.parquet", [1], 0)
    pattern = _batch(tmp_path / "t" / "b[2].parquet", [2], 1)
    df = spark.read.parquet(str(tmp_path / "t"))
    assert "%20" in spaced
    assert _narrowed(spark, df, [spaced]) is None
    assert _narrowed(spark, df, [pattern]) is None  # Spark would read `[2]` as a pattern


@pytest.mark.parametrize("execution", ["driver", "distributed"])
def test_a_refresh_reads_only_the_new_batch(spark: Any, tmp_path: Path, execution: str) -> None:
    """An old batch's file made unreadable after it was committed is not read again: the
    refresh reads the new batch's file only (a whole scan would fail on the old one)."""
    src = tmp_path / "src"
    _batch(src / "b0.parquet", [1, 2, 3], 0)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW nr_src (id BIGINT, v BIGINT) USING parquet OPTIONS (path '{src}')")
    job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", execution=execution, buckets=2,
                        publish=False)
    job.append_table("t", source="nr_src", offset="v")
    job.view("CREATE VIEW n AS SELECT COUNT(*) AS n, SUM(id) AS total FROM t")
    assert job.refresh().committed
    (src / "b0.parquet").write_bytes(b"no longer parquet")
    _batch(src / "b1.parquet", [10], 1)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW nr_src (id BIGINT, v BIGINT) USING parquet OPTIONS (path '{src}')")
    assert job.refresh().committed
    assert [tuple(r) for r in job.table("n").collect()] == [(4, 16)]

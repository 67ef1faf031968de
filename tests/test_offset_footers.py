"""The offsets check reads a new batch's parquet footers instead of running a Spark job
(runtime/spark/engine.py's `_all_above`): it may only ever answer "every row is above the
committed offset" when the statistics prove it, and leaves every other case to Spark."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dbspc.runtime.spark.engine import _all_above


def _write(path: Path, offsets: list[int | None], **kwargs: object) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": list(range(len(offsets))), "v": pa.array(offsets, pa.int64())}), path, **kwargs)
    return path.as_uri()  # as Spark's inputFiles() names it: file:///..., percent-encoded


def test_a_batch_above_the_committed_offset_needs_no_job(tmp_path: Path) -> None:
    files = [_write(tmp_path / "b 1 %x.parquet", [4, 5, None]), _write(tmp_path / "b2.parquet", [6] * 10)]
    assert _all_above(files, "v", 3)


@pytest.mark.parametrize(
    "why, offsets, kwargs, upto",
    [
        ("a row at the committed offset", [4, 3], {}, 3),
        ("a row behind it in a later row group", [9, 9, 1], {"row_group_size": 2}, 3),
        ("no statistics", [4, 5], {"write_statistics": False}, 3),
        ("only NULL offsets (no minimum)", [None, None], {}, 3),
    ],
)
def test_anything_unproven_is_left_to_spark(
    tmp_path: Path, why: str, offsets: list[int | None], kwargs: dict[str, object], upto: int
) -> None:
    assert not _all_above([_write(tmp_path / "b.parquet", offsets, **kwargs)], "v", upto), why


def test_files_it_cannot_read_are_left_to_spark(tmp_path: Path) -> None:
    here = _write(tmp_path / "b.parquet", [7])
    assert not _all_above([here], "version", 3)  # a column the file lacks (a partition column, say)
    assert not _all_above([here, "s3a://bucket/b.parquet"], "v", 3)  # not a local file
    assert not _all_above([(tmp_path / "gone.parquet").as_uri()], "v", 3)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    assert not _all_above([(tmp_path / "bad.parquet").as_uri()], "v", 3)

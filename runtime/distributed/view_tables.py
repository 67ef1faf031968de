"""The views' tables, written by the executors (distributed mode).

The same versions and change logs as driver mode (runtime/refresh/sinks.py), built by
Spark tasks instead of the driver: the views' deltas, as the last stages wrote them,
are split by the table's own buckets (a hash of the whole row) and moved so that one
task holds one bucket of one view; it reads that bucket's old file, adds the delta,
writes the new file and stages its piece of the change log. The versions follow from
the weight sums the stages reported (`_decide`); the driver links the buckets no change
reached and commits; it never holds a view's rows. A view bucketed anew (its first
write, or grown fourfold) has its old files read by the tasks too.

A small change, the usual one, is written by the slots in the last phase of the stages'
job (`phase`): each slot reads every delta and takes the same decision from the same
facts, so the write costs no Spark job of its own.

Tasks write through the same `Sinks`, so the output must be a directory every
executor mounts (`LocalStorage`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import reduce
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbspc.compiler.types import SqlType
from dbspc.runtime.distributed.spark_stages import (
    BLOB,
    FACTS,
    VIEWS,
    Refreshed,
    blobs,
    decode,
    output_tag,
    pieces,
    read_facts,
)
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.sinks import Sinks, ViewVersion, bucket_split
from dbspc.runtime.zset import ZSet

_DONE = "view INT, bucket INT, nonempty BOOLEAN, rows BIGINT"
_DELTA, _OLD = 0, 1  # in a moved blob's channel: 2 * view + which rows it holds
_SMALL = 1 << 20  # delta rows times slots, up to which the views are written over the slots
WRITTEN = "w"  # x/r<k>/w/s<slot>.json: the view buckets each slot wrote in the stages' job


@dataclass(frozen=True)
class _Version:
    """What the driver decided for one view's refresh."""

    before: ViewVersion
    out: ViewVersion
    rebucket: bool
    rows: int


def write(
    spark: SparkSession,
    sinks: Sinks,
    k: int,
    refreshed: Refreshed,
    committed: Mapping[str, Any],
    written: Path | None = None,
    slots: int = 1,
) -> tuple[dict[str, Any], dict[str, int]]:
    """Refresh k's versions and staged change logs of every view: the manifest's sinks
    section, and the rows of each view's delta (consolidated).

    A small change's buckets (at most _SMALL delta rows once per slot, no old rows to
    move) were written by the stages' job itself, in its last phase (`phase`), each of
    the `slots` recording in `written` what it wrote. Larger ones move through Spark's
    shuffle here, one task per view and bucket."""
    stamp = time.time()
    names = sorted(sinks.views)
    sums = _sums(refreshed.metrics(), names)
    section, plans = _decide(sinks, k, committed, sums)
    found = _written(written, slots) if plans and written is not None else None
    for view, p in plans.items():
        if found is None:
            sinks.clear_version(view, k)  # a crashed attempt's files
        if view in sinks.change_log and p.before.version is None:
            sinks.storage.mkdirs(f"{view}/changes")  # readers find an empty log
    if plans and found is None:
        job = _rewrite(spark, sinks, k, refreshed, plans, names, stamp).collect()
        found = [(int(r["view"]), int(r["bucket"]), bool(r["nonempty"]), int(r["rows"])) for r in job]
    done: dict[str, dict[int, bool]] = {v: {} for v in plans}
    rows_out = dict.fromkeys(names, 0)
    for i, bucket, nonempty, rows in found or []:
        done[names[i]][bucket] = nonempty
        rows_out[names[i]] += rows
    for view, p in plans.items():
        section[view] = sinks.finish_version(view, p.out, p.before, done[view], p.rebucket, p.rows).to_json()
    for view, entry in section.items():
        entry["schema"] = sinks.schema(view)
    return section, rows_out


def phase(
    sinks: Sinks, k: int, committed: Mapping[str, Any], out: Path, views: Sequence[str], slots: int, stamp: float
) -> Callable[[int], None]:
    """The views' write as the last phase of the stages' job (`SparkStages.step`'s
    `then`), which saves a job of its own: each slot reads the stages' facts and takes
    the driver's decision itself (`_decide`, a function of the facts and `committed`).
    If the change is small enough (`_over_slots`), the slot writes its share of the
    buckets and records them in WRITTEN; else it writes nothing and `write` moves the
    rows through a shuffle. `out`: the refresh's directory; `views`: the views in the
    order of their output tags. The driver cleared refresh k's versions beforehand."""
    small = _SMALL  # the driver's value, which the tasks' module may not share (a test lowers it)
    tags = _view_of_tag(views)

    def run(slot: int) -> None:
        names = sorted(sinks.views)
        sums = _sums(read_facts(out / FACTS), names)
        _, plans = _decide(sinks, k, committed, sums)
        if plans and _over_slots(plans, sums, slots, small):
            done = _write_share(sinks, k, names, plans, stamp, tags, out / VIEWS, slots, slot)
            files.write_json(out / WRITTEN / f"s{slot}.json", done)

    return run


def _view_of_tag(views: Iterable[str]) -> dict[int, str]:
    """Each output tag's view, `views` in SparkStages' order (the order of their tags)."""
    return {output_tag(i): v for i, v in enumerate(views)}


def _sums(facts: list[dict[str, Any]], names: list[str]) -> dict[str, list[int]]:
    """Per view, the rows and the weight sum of its delta, as the stages' tasks reported."""
    sums: dict[str, list[int]] = {v: [0, 0] for v in names}
    for fact in facts:
        for view, (rows, weight) in fact.get("outputs", {}).items():
            sums[view][0] += rows
            sums[view][1] += weight
    return sums


def _decide(
    sinks: Sinks, k: int, committed: Mapping[str, Any], sums: Mapping[str, list[int]]
) -> tuple[dict[str, Any], dict[str, _Version]]:
    """The sinks section of the views no change reached, and a new version of each other
    one (`Sinks.plan_version`): a decision only, so that tasks can take it too."""
    section: dict[str, Any] = {}
    plans: dict[str, _Version] = {}
    for view in sorted(sinks.views):
        before = ViewVersion.from_json(committed.get(view))
        if sums[view][0] == 0 and before.version is not None:
            section[view] = replace(before, retired=None).to_json()  # the retired one goes now
            continue
        rows = before.rows + sums[view][1]
        out, rebucket = sinks.plan_version(view, k, before, rows)
        plans[view] = _Version(before, out, rebucket, rows)
    return section, plans


def _over_slots(plans: Mapping[str, _Version], sums: Mapping[str, list[int]], slots: int, small: int) -> bool:
    """Whether the slots write the views: every slot reads every delta, so only a small
    one, and no view bucketed anew has old rows to move."""
    moves_old = any(p.rebucket and p.before.version is not None for p in plans.values())
    return sum(sums[v][0] for v in plans) * slots <= small and not moves_old


def _written(where: Path, slots: int) -> list[tuple[int, int, bool, int]] | None:
    """What the slots recorded writing (`phase`), or None if any slot wrote nothing."""
    found = [where / f"s{slot}.json" for slot in range(slots)]
    if not all(f.exists() for f in found):
        return None
    return [(int(i), int(b), bool(nonempty), int(rows)) for f in found for i, b, nonempty, rows in files.read_json(f)]


def _rewrite(
    spark: SparkSession,
    sinks: Sinks,
    k: int,
    refreshed: Refreshed,
    plans: Mapping[str, _Version],
    names: list[str],
    stamp: float,
) -> DataFrame:
    """The job: every delta (and a rebucketed view's old rows) to its table bucket, one
    task per view and bucket."""
    index = {v: i for i, v in enumerate(names)}
    tags = _view_of_tag(refreshed.deltas)
    routes = {tag: (index[v], sinks.types(v), plans[v].out.buckets) for tag, v in tags.items() if v in plans}
    outputs = spark.read.schema(BLOB).parquet(*refreshed.stage_files).where(F.col("ch").isin(list(routes)))
    inputs = [outputs.mapInArrow(_by_table_bucket(routes), BLOB)]
    for view, p in plans.items():
        if p.rebucket and p.before.version is not None:
            old = spark.read.parquet(*[sinks.storage.uri(p.before.part(b)) for b in p.before.parts])
            inputs.append(old.mapInArrow(_old_rows(sinks, view, index[view], p.out.buckets), BLOB))
    task = _bucket_task(sinks, k, names, plans, stamp)
    moved = reduce(DataFrame.unionByName, inputs)
    return moved.groupBy(F.floor(F.col("ch") / 2).alias("view"), "bucket").applyInArrow(task, _DONE)


def _split_rows(z: ZSet, channel: int, buckets: int) -> list[tuple[int, int, bytes]]:
    parts = bucket_split(z.frame, buckets)
    return [row for b, f in enumerate(parts) if f.height for row in pieces(channel, b, ZSet(f, z.types))]


def _by_table_bucket(
    routes: Mapping[int, tuple[int, tuple[SqlType, ...], int]],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            rows: list[tuple[int, int, bytes]] = []
            for tag, data in zip(batch.column("ch").to_pylist(), batch.column("data").to_pylist(), strict=True):
                view, types, buckets = routes[tag]
                rows += _split_rows(decode(data, types), 2 * view + _DELTA, buckets)
            if rows:
                yield blobs(rows)

    return run


def _old_rows(
    sinks: Sinks, view: str, index: int, buckets: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield blobs(_split_rows(sinks.as_rows(view, pa.Table.from_batches([batch])), 2 * index + _OLD, buckets))

    return run


def _write_bucket(
    sinks: Sinks, k: int, view: str, p: _Version, bucket: int, delta: ZSet, old: list[pl.DataFrame], stamp: float
) -> bool:
    """One bucket of the view's new version, from its consolidated delta (and, when the
    view is bucketed anew, its old rows); its piece of the change log staged. False if
    the bucket is empty."""
    frame = pl.concat([delta.frame, *old]) if old else delta.frame
    nonempty = sinks.rewrite_bucket(view, p.out, p.before, bucket, frame, p.rebucket)
    if view in sinks.change_log and len(delta):
        sinks.stage_changes(view, k, delta.frame, stamp, piece=bucket)
    return nonempty


def _bucket_task(
    sinks: Sinks, k: int, names: list[str], plans: Mapping[str, _Version], stamp: float
) -> Callable[[tuple[pa.Scalar, ...], pa.Table], pa.Table]:
    def run(key: tuple[pa.Scalar, ...], table: pa.Table) -> pa.Table:
        i, bucket = int(key[0].as_py()), int(key[1].as_py())
        view = names[i]
        types = sinks.types(view)
        parts: dict[int, list[pl.DataFrame]] = {_DELTA: [], _OLD: []}
        for ch, data in zip(table.column("ch").to_pylist(), table.column("data").to_pylist(), strict=True):
            parts[ch % 2].append(decode(data, types).frame)
        delta = ZSet.concat([ZSet(f, types) for f in parts[_DELTA]], types).consolidate()
        nonempty = _write_bucket(sinks, k, view, plans[view], bucket, delta, parts[_OLD], stamp)
        done = [pa.array([i], pa.int32()), pa.array([bucket], pa.int32()), pa.array([nonempty]), pa.array([len(delta)])]
        return pa.Table.from_arrays(done, names=["view", "bucket", "nonempty", "rows"])

    return run


def _write_share(
    sinks: Sinks,
    k: int,
    names: list[str],
    plans: Mapping[str, _Version],
    stamp: float,
    tags: Mapping[int, str],
    deltas: Path,
    slots: int,
    slot: int,
) -> list[tuple[int, int, bool, int]]:
    """A slot's share of a small change's buckets: every view's whole delta read (it is
    small), split by the view's buckets, and the buckets (view i, b) with (i + b) mod
    slots = the slot written. Returns (view, bucket, not empty, delta rows) per bucket."""
    found: dict[str, list[ZSet]] = {}
    for path in sorted(deltas.glob("*.parquet")):
        table = pq.read_table(path)
        for ch, data in zip(table.column("ch").to_pylist(), table.column("data").to_pylist(), strict=True):
            view = tags.get(ch)
            if view is not None and view in plans:
                found.setdefault(view, []).append(decode(data, sinks.types(view)))
    done = []
    for view, parts in sorted(found.items()):
        i, p, types = names.index(view), plans[view], sinks.types(view)
        delta = ZSet.concat(parts, types).consolidate()
        for bucket, frame in enumerate(bucket_split(delta.frame, p.out.buckets)):
            if frame.height and (i + bucket) % slots == slot:
                nonempty = _write_bucket(sinks, k, view, p, bucket, ZSet(frame, types), [], stamp)
                done.append((i, bucket, nonempty, frame.height))
    return done

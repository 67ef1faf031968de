"""A SparkPipeline's refresh run on the executors: `execution="distributed"`.

The refresh protocol is driver mode's (runtime/refresh/job.py): the same sources,
offsets and checks, the same view versions and change logs, one manifest rename as the
commit point. What moves to the executors:

- the changes are DataFrames the tasks read, never collected: while the sources are
  read, one job per source sends its rows to their buckets and returns the count, top
  offset and hash sum the offsets and checks need (`SparkStages.send`; a plain table's
  diff stays a Spark query);
- the step is SparkStages: the circuit's stages run per bucket with their state on the
  executors, each change checked against its table first (spark_stages.py);
- the views' tables are written by tasks (view_tables.py): a small change's by the
  last phase of the stages' job.

The driver holds no state, no table and no delta: only the compiled program, offsets,
and per refresh a few small facts per task. The bucket states live in
`<checkpoint>/distributed`, and a bucket's state counts only once the manifest naming
its refresh is committed, so a killed driver or executor leaves the previous refresh in
force, exactly as in driver mode. The checkpoint and the output must be directories
every executor reads and writes (a shared file system).

Not built: carrying a distributed checkpoint over to changed views (start a new
checkpoint), and changing the number of buckets of a checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from dbspc.compiler.errors import UsageError
from dbspc.runtime.distributed import bucket_state, view_tables
from dbspc.runtime.distributed.spark_stages import Refreshed, Sent, SparkStages, refresh_dir
from dbspc.runtime.pipeline import CIRCUIT, Pipeline
from dbspc.runtime.refresh.checkpoint import Manifest
from dbspc.runtime.refresh.job import DISTRIBUTED, Job, Pulled, snapshot_path
from dbspc.runtime.refresh.schema import SourceColumn
from dbspc.runtime.refresh.sources import PlainTable, Source, selection, spark_name, to_zset
from dbspc.runtime.refresh.storage import LocalStorage
from dbspc.runtime.spark.engine import SparkEngine
from dbspc.runtime.zset import ZSet

STATE_DIR = "distributed"  # <checkpoint>/distributed: every bucket's state


class DistributedJob(Job):
    """A Job whose step, state and view writes run in Spark tasks over `buckets` buckets."""

    def __init__(self, engine: SparkEngine, *args: Any, buckets: int = 8, **kwargs: Any) -> None:
        super().__init__(engine, *args, **kwargs)
        if not isinstance(self.storage, LocalStorage):
            raise UsageError(
                f"execution='distributed' writes the views' tables from the executors: the output must be a "
                f"directory every executor mounts (a local path on a shared file system), not {self.storage}"
            )
        if buckets < 1:
            raise UsageError(f"buckets must be at least 1, got {buckets}")
        self.spark: SparkSession = engine.spark
        self.spark_engine = engine
        self.buckets = buckets
        self._stages: SparkStages | None = None
        self.last: Refreshed | None = None  # the last step: its tasks' facts (`metrics`)

    @property
    def state_root(self) -> Path:
        return self.checkpoint_dir / STATE_DIR

    def stages(self) -> SparkStages:
        if self._stages is None:
            pipeline = self.pipeline
            self._stages = SparkStages(
                self.spark,
                pipeline.circuit,
                self.state_root,
                self.buckets,
                columns={v: pipeline.view_columns(v) for v in pipeline.view_names()},
                tables=pipeline.program.tables,
            )
        return self._stages

    # -- the hooks of Job --------------------------------------------------------------

    def _resumable(self, manifest: Manifest, pipeline: Pipeline) -> bool:
        return True  # _resume checks the mode, the buckets and the circuit, naming what differs

    def _resume(self, manifest: Manifest, pipeline: Pipeline) -> None:
        meta = manifest.pipeline.get(DISTRIBUTED)
        if meta is None:
            raise UsageError(
                f"checkpoint {self.checkpoint_dir} was written in driver mode; resume it without "
                "execution='distributed', or start over with a new checkpoint"
            )
        recorded = meta.get(CIRCUIT)
        if recorded is not None and recorded != pipeline.circuit_digest():
            raise UsageError(
                f"checkpoint {self.checkpoint_dir} holds the state of these views compiled to another circuit "
                "(by another version of dbspc); a distributed job cannot carry its state over: start over with "
                "a new checkpoint"
            )
        bucket_state.check_layout(meta, str(self.checkpoint_dir))
        if int(meta["buckets"]) != self.buckets:
            raise UsageError(
                f"checkpoint {self.checkpoint_dir} keeps its state in {meta['buckets']} buckets; resume it with "
                f"buckets={meta['buckets']} (changing a checkpoint's buckets is not supported)"
            )

    def _bootstrap(self, pipeline: Pipeline, manifest: Manifest) -> Manifest:
        was, now = manifest.program.get("time_zone", "UTC"), self.program.get("time_zone", "UTC")
        what = f"session time zone (was {was}, now {now})" if was != now else "tables or views"
        raise UsageError(
            f"the {what} of checkpoint {self.checkpoint_dir} changed; a distributed job cannot carry its "
            "state over to a changed program: start over with a new checkpoint"
        )

    def _read(self, k: int) -> Any:
        self.stages().begin(self.refresh_id)  # before any source sends its rows
        return super()._read(k)

    def _fetch(
        self, index: int, spec: Source, k: int, after: int | None, snapshot: str | None, within: list[str] | None
    ) -> Sent:
        """The source's changes sent to their buckets: the read is the send (one job)."""
        columns = self.columns[spec.table.lower()]
        convert = partial(_batch, spec, columns)
        table = spec.table.lower()
        if isinstance(spec, PlainTable):
            old = self.checkpoint_dir / snapshot if snapshot else None
            new = self.checkpoint_dir / snapshot_path(index, k)
            diff = self.spark_engine.snapshot_diff_frame(spark_name(spec), [c.name for c in columns], new, old)
            return self.stages().send(table, diff, self.refresh_id, convert)
        rows = self.spark_engine.changes_after(spark_name(spec), selection(spec, columns), spec.offset, after, within)
        return self.stages().send(table, rows, self.refresh_id, convert, offsets=True)

    def _as_change(self, spec: Source, data: Any) -> Pulled:
        assert isinstance(data, Sent)
        return Pulled(data, data.rows, data.top, data.hashes)

    def _step(self, pipeline: Pipeline, changes: dict[str, Any]) -> Refreshed:
        """The stages' job, whose last phase writes the views (view_tables.py's `phase`)."""
        assert self._sinks is not None
        stages, k = self.stages(), self.refresh_id + 1
        for view in self._sinks.views:
            self._sinks.clear_version(view, k)  # a crashed attempt's files, before the tasks write
        committed = self.manifest.sinks if self.manifest else {}
        views = [name for name, _ in stages.views]
        out = refresh_dir(stages.root, k)
        write = view_tables.phase(self._sinks, k, committed, out, views, stages.slots().n, time.time())
        self.last = stages.step(self.refresh_id, set(changes), then=[write])
        return self.last

    def _write_outputs(
        self, k: int, stepped: Any, committed: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, int], Mapping[str, Any]]:
        assert self._sinks is not None and isinstance(stepped, Refreshed)
        written = refresh_dir(self.stages().root, k) / view_tables.WRITTEN
        section, rows = view_tables.write(
            self.spark, self._sinks, k, stepped, committed, written, self.stages().slots().n
        )
        return section, rows, stepped.deltas

    def _save_state(self, k: int, pipeline: Pipeline) -> tuple[dict[str, list[str]], Any, dict[str, Any]]:
        meta = {"buckets": self.buckets, CIRCUIT: pipeline.circuit_digest(), "layout": bucket_state.LAYOUT}
        return {}, {}, {DISTRIBUTED: meta}

    def _collect_garbage(self) -> None:
        super()._collect_garbage()
        bucket_state.collect_garbage(self.state_root, self.refresh_id)


def _batch(spec: Source, columns: Sequence[SourceColumn], batch: pa.Table) -> ZSet:
    """A batch of a source's change DataFrame as a ZSet, checked as driver mode checks it."""
    return to_zset(spec, batch, tuple(columns))[0]

"""SparkPipeline: dbspc views maintained incrementally inside a PySpark job.

    job = SparkPipeline(spark, "/data/checkpoints/sales")
    job.change_table("orders", source="orders_cdc", offset="version", op="op")
    job.append_table("customers", offset="batch")
    job.plain_table("regions")
    job.view("CREATE VIEW revenue AS SELECT ... FROM orders JOIN customers ...")
    result = job.refresh()        # pull changes, step once, write outputs, checkpoint
    spark.table("revenue")        # the committed contents (a temporary view)
    job.table("revenue")          # the same, as a DataFrame

The program is compiled at the first `start()` / `refresh()` from DDL generated from the
Spark catalog plus the registered views; a checkpoint written by a different program
is refused. See docs/spark.md for the design and its guarantees.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import DataFrame, SparkSession

from compiler.errors import UsageError
from runtime.nested import DEFAULT_MAX_ITERATIONS
from runtime.pipeline import Pipeline
from runtime.refresh.job import Job, RefreshResult
from runtime.refresh.sources import DEFAULT_OPS, AppendTable, ChangeTable, PlainTable, Source, spark_name
from runtime.spark import readers
from runtime.spark.engine import SparkEngine


class SparkPipeline:
    """Views over Spark tables, refreshed incrementally and checkpointed exactly once.

    - `checkpoint`: a local directory of this job's own (state, offsets, manifest).
    - `output`: where view tables are written, owned by this checkpoint alone; by
      default `<warehouse>/dbspc/<checkpoint directory name>-<hash of its whole path>`.
    - `change_log`: True (every view) or view names to also keep each refresh's delta.
    - `publish`: register each view (and `<view>_changes`) as a temporary view of the
      session after every commit, named with `view_prefix`.
    """

    def __init__(
        self,
        spark: SparkSession,
        checkpoint: str | Path,
        *,
        output: str | Path | None = None,
        sources: Sequence[Source] = (),
        views: Sequence[str] = (),
        dialect: str = "spark",
        change_log: bool | Sequence[str] = False,
        publish: bool = True,
        view_prefix: str = "",
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        refresh_sources: bool = True,
    ) -> None:
        self.spark = spark
        self.checkpoint_dir = Path(checkpoint).resolve()
        self.output_dir = Path(output).resolve() if output is not None else _default_output(spark, self.checkpoint_dir)
        self.publish = publish
        self.view_prefix = view_prefix
        self._sources: list[Source] = list(sources)
        self._views: list[str] = list(views)
        self._options: dict[str, Any] = {
            "dialect": dialect,
            "max_iterations": max_iterations,
            "change_log": change_log,
        }
        self._engine = SparkEngine(spark, refresh_sources)
        self._job: Job | None = None
        self._record: dict[str, Any] | None = None
        self._shown: dict[str, Any] = {}  # the runs each published temporary view reads

    # -- registration ----------------------------------------------------------------

    def source(self, spec: Source) -> SparkPipeline:
        self._registering()
        self._sources.append(spec)
        return self

    def change_table(
        self,
        table: str,
        *,
        offset: str,
        weight: str | None = None,
        op: str | None = None,
        source: str | None = None,
        ops: Mapping[str, int] = DEFAULT_OPS,
    ) -> SparkPipeline:
        """A change table: the table's columns plus `weight` (an integer) or `op`
        (insert/delete/update_preimage/update_postimage, or `ops`), plus `offset`."""
        return self.source(ChangeTable(table, offset, weight, op, source, dict(ops)))

    def append_table(self, table: str, *, offset: str, source: str | None = None) -> SparkPipeline:
        """An insert-only table with an increasing `offset` column."""
        return self.source(AppendTable(table, offset, source))

    def plain_table(self, table: str, *, source: str | None = None) -> SparkPipeline:
        """A table with no change information: diffed against its last snapshot on every
        refresh, which reads and writes the whole table (the costly fallback)."""
        return self.source(PlainTable(table, source))

    def view(self, sql: str) -> SparkPipeline:
        """Register `CREATE VIEW name AS ...` (several statements may be given at once)."""
        self._registering()
        self._views.append(sql)
        return self

    def _registering(self) -> None:
        if self._job is not None:
            raise UsageError("sources and views must be registered before the first start() or refresh()")

    # -- running ---------------------------------------------------------------------

    @property
    def job(self) -> Job:
        if self._job is None:
            if not self._views:
                raise UsageError("no views registered; call view('CREATE VIEW ...') first")
            self._job = Job(
                self._engine,
                self.checkpoint_dir,
                self.output_dir,
                self._sources,
                self._views,
                dialect=self._options["dialect"],
                max_iterations=self._options["max_iterations"],
                change_log=self._options["change_log"],
                on_commit=self._committed,
                validate=self._validate,
            )
        return self._job

    def start(self) -> SparkPipeline:
        """Compile and resume from the checkpoint (refresh() does this the first time)."""
        self.job.start()
        return self

    def refresh(self) -> RefreshResult:
        """Pull every source's changes since the last refresh, step the views once,
        write their outputs and checkpoint, atomically."""
        self.start()
        return self.job.refresh()

    def close(self) -> None:
        if self._job is not None:
            self._job.close()

    @property
    def pipeline(self) -> Pipeline:
        return self.job.pipeline

    @property
    def refresh_id(self) -> int:
        """The last committed refresh (0 before the first)."""
        self.start()
        return self.job.refresh_id

    @property
    def program_text(self) -> str:
        """The DDL generated from the Spark catalog plus the views, as compiled."""
        self.start()
        return self.job.program_text

    # -- reading ---------------------------------------------------------------------

    def table(self, view: str) -> DataFrame:
        """The view's contents as of the last committed refresh."""
        record = self._published()
        return readers.contents(self.spark, self.output_dir, _entry(record, view), view)

    def changes(self, view: str) -> DataFrame:
        """The view's change log: its columns plus `weight` and `refresh_id`."""
        record = self._published()
        return readers.changes(self.spark, self.output_dir, _entry(record, view), view, int(record["refresh_id"]))

    def _published(self) -> dict[str, Any]:
        self.start()
        if self._record is None:
            self._record = self.job.published()
        return self._record

    def _validate(self, pipeline: Pipeline) -> None:
        """Refuse, before anything runs, to publish a view over a source's name."""
        if not self.publish:
            return
        taken = {spark_name(s).lower() for s in self._sources}
        names = [self.view_prefix + v for v in pipeline.view_names()]
        for name in names:
            if name.lower() in taken or f"{name}_changes".lower() in taken:
                raise UsageError(f"publishing view '{name}' would hide the source table of that name; set view_prefix")

    def _committed(self, record: dict[str, Any]) -> None:
        """After each commit (and on resume): point the session's views at it."""
        self._record = record
        if not self.publish:
            return
        for view, entry in record["views"].items():
            if self._shown.get(view) == entry["runs"]:
                continue  # unchanged since the last publish (no change-log rows either)
            readers.contents(self.spark, self.output_dir, entry, view).createOrReplaceTempView(self.view_prefix + view)
            self._shown[view] = entry["runs"]
            if entry["change_log"]:
                log = readers.changes(self.spark, self.output_dir, entry, view, int(record["refresh_id"]))
                log.createOrReplaceTempView(f"{self.view_prefix}{view}_changes")


def _entry(record: Mapping[str, Any], view: str) -> Mapping[str, Any]:
    views = record["views"]
    if view.lower() not in views:
        raise UsageError(f"no view '{view}'; the job has {', '.join(sorted(views))}")
    entry: Mapping[str, Any] = views[view.lower()]
    return entry


def _default_output(spark: SparkSession, checkpoint: Path) -> Path:
    """<spark.sql.warehouse.dir>/dbspc/<checkpoint name>-<hash of its path>: the session's
    warehouse. The hash keeps apart checkpoints of the same name (/a/checkpoint and
    /b/checkpoint), which would otherwise write their views over each other's."""
    url = urlparse(spark.conf.get("spark.sql.warehouse.dir") or "spark-warehouse")
    if url.scheme not in ("", "file"):
        raise UsageError(f"the warehouse {url.geturl()} is not on a local file system; pass output= a local directory")
    digest = hashlib.sha256(str(checkpoint.resolve()).encode()).hexdigest()[:16]
    return (Path(url.path) / "dbspc" / f"{checkpoint.name}-{digest}").resolve()

"""SparkPipeline: dbspc views maintained incrementally inside a PySpark job.

    job = SparkPipeline(spark, "/data/checkpoints/sales")
    job.change_table("orders", source="orders_cdc", offset="version", op="op")
    job.append_table("customers", offset="batch")
    job.plain_table("regions")
    job.view("CREATE VIEW revenue AS SELECT ... FROM orders JOIN customers ...")
    result = job.refresh()        # pull changes, step once, write outputs, checkpoint
    spark.table("revenue")        # the committed contents: a catalog table
    spark.table("revenue_changes")  # its change data feed (with change_log=True)

The program is compiled at the first `start()` / `refresh()` from DDL generated from the
Spark catalog plus the registered views; a checkpoint written by a different program
is refused. See docs/spark.md for the design and its guarantees.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from dbspc.compiler.errors import SparkExtension, UsageError, collecting_extensions
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.refresh import metrics
from dbspc.runtime.refresh.job import Job, RefreshResult
from dbspc.runtime.refresh.sources import DEFAULT_OPS, AppendTable, ChangeTable, PlainTable, Source, spark_name
from dbspc.runtime.refresh.storage import Storage
from dbspc.runtime.refresh.storage import at as storage_at
from dbspc.runtime.spark import readers
from dbspc.runtime.spark.engine import SparkEngine


class SparkPipeline:
    """Views over Spark tables, refreshed incrementally and checkpointed exactly once.

    - `checkpoint`: a local directory of this job's own (state, offsets, manifest).
    - `output`: where view tables are written (a local path or any Hadoop file system
      URI: hdfs://, s3a://, abfss://, ...), owned by this checkpoint alone; by default
      `<warehouse>/dbspc/<checkpoint directory name>-<hash of its whole path>`.
    - `change_log`: True (every view) or view names to also keep each refresh's delta.
    - `publish`: keep each view (and `<view>_changes`) as a catalog table of the
      session's catalog, named with `view_prefix` (e.g. "sales." for a database),
      whose location moves to each committed version.
    - `replace`: take over catalog tables of the views' names that this job did not
      create (dropped first); otherwise such a name is refused.
    - `execution`: "driver" (the default) keeps the state in this process and steps
      there; "distributed" runs the step on the executors, with the state partitioned
      into `buckets` by key and kept there (runtime/distributed/pipeline_job.py,
      docs/distributed.md). Then `checkpoint` and `output` must be directories every
      executor reads and writes.
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
        replace: bool = False,
        max_iterations: int | None = None,
        refresh_sources: bool = True,
        execution: str = "driver",
        buckets: int = 8,
    ) -> None:
        if execution not in EXECUTIONS:
            raise UsageError(f"execution must be one of {', '.join(EXECUTIONS)}, got {execution!r}")
        self.spark = spark
        self.execution = execution
        self.buckets = buckets
        self.checkpoint_dir = Path(checkpoint).resolve()
        location = str(output) if output is not None else _default_output(spark, self.checkpoint_dir)
        self.storage: Storage = storage_at(location, spark)
        self.publish = publish
        self.view_prefix = view_prefix
        self.replace = replace
        self._sources: list[Source] = list(sources)
        self._views: list[str] = list(views)
        self._origins: list[tuple[str, int] | None] = []
        self._extensions_said: set[str] = set()
        self._options: dict[str, Any] = {
            "dialect": dialect,
            "max_iterations": max_iterations,
            "change_log": change_log,
        }
        self._engine = SparkEngine(spark, refresh_sources)
        self._job: Job | None = None
        self._record: dict[str, Any] | None = None
        self._shown: dict[str, Any] = {}  # the version each catalog table points at

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

    def change_feed(self, table: str, *, source: str | None = None) -> SparkPipeline:
        """A change data feed as Delta writes it (`table_changes(...)`, or any table of
        that shape): the data columns plus `_change_type` (insert / delete /
        update_preimage / update_postimage), `_commit_version` (the offset) and
        `_commit_timestamp`, which are metadata, not columns of the table."""
        return self.source(ChangeTable(table, "_commit_version", op="_change_type", source=source))

    def append_table(self, table: str, *, offset: str, source: str | None = None) -> SparkPipeline:
        """An insert-only table with an increasing `offset` column."""
        return self.source(AppendTable(table, offset, source))

    def plain_table(self, table: str, *, source: str | None = None) -> SparkPipeline:
        """A table with no change information: diffed against its last snapshot on every
        refresh, which reads and writes the whole table (the costly fallback)."""
        return self.source(PlainTable(table, source))

    def view(self, sql: str, *, origin: tuple[str, int] | None = None) -> SparkPipeline:
        """Register `CREATE [OR REPLACE] [MATERIALIZED] VIEW name AS ...` (several
        statements may be given at once). It is compiled at once against the sources
        registered so far, so a mistake is reported here, at the view's own line and
        column; `origin` (file name, first line) places those in a file."""
        self._registering()
        self._origins.extend([None] * (len(self._views) - len(self._origins)))
        self._views.append(sql)
        self._origins.append(origin)
        try:
            _, extensions = collecting_extensions(self._new_job().check)
        except BaseException:
            self._views.pop()
            self._origins.pop()
            raise
        for extension in extensions:
            if extension.message not in self._extensions_said:
                # said once, at the caller's view() line (each view() compiles them all again)
                self._extensions_said.add(extension.message)
                warnings.warn(SparkExtension(extension.message), stacklevel=2)
        return self

    def view_file(self, path: str | Path) -> SparkPipeline:
        """Register the views of a .sql file (positions in errors are the file's)."""
        file = Path(path)
        try:
            text = file.read_text()
        except OSError as e:
            raise UsageError(f"cannot read view file {file}: {e.strerror or e}") from None
        return self.view(text, origin=(str(file), 1))

    def _registering(self) -> None:
        if self._job is not None:
            raise UsageError("sources and views must be registered before the first start() or refresh()")

    # -- running ---------------------------------------------------------------------

    @property
    def job(self) -> Job:
        if self._job is None:
            if not self._views:
                raise UsageError("no views registered; call view('CREATE VIEW ...') first")
            self._job = self._new_job()
        return self._job

    def _new_job(self) -> Job:
        if self.execution == "distributed":
            from dbspc.runtime.distributed.pipeline_job import DistributedJob

            return DistributedJob(self._engine, *self._job_args(), buckets=self.buckets, **self._job_options())
        return Job(self._engine, *self._job_args(), **self._job_options())

    def _job_args(self) -> tuple[Any, ...]:
        return (self.checkpoint_dir, self.storage, self._sources, self._views)

    def _job_options(self) -> dict[str, Any]:
        return dict(
            dialect=self._options["dialect"],
            time_zone=_session_time_zone(self.spark, self._options["dialect"]),
            max_iterations=_recursion_limit(self.spark, self._options["max_iterations"]),
            change_log=self._options["change_log"],
            on_commit=self._committed,
            validate=self._validate,
            origins=self._origins,
        )

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

    def metrics(self) -> list[dict[str, Any]]:
        """This process's refreshes, oldest first: offsets, rows in and out, state rows
        and bytes, seconds per phase. All refreshes are in the table
        `<view_prefix>dbspc_metrics` (and `<output>/_metrics`)."""
        return self.job.metrics() if self._job is not None else []

    def explain(self) -> None:
        """Print the incremental circuit of the views with its cost report: the state
        each operator keeps and what a change costs, as `dbspc compile` prints it (and in
        distributed mode, its plan: stages, exchanges and partitionings)."""
        from dbspc.compiler.circuit.dump import to_text
        from dbspc.compiler.circuit.report import to_report
        from dbspc.compiler.deep_stack import deep

        circuit = self.pipeline.circuit
        print(deep(lambda: to_text(circuit) + to_report(circuit)), end="")
        if self.execution == "distributed":
            from dbspc.runtime.distributed.plan import plan

            print(plan(circuit).dump(), end="")

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
        return readers.contents(self.spark, self.storage.uri(), _entry(record, view), view)

    def changes(self, view: str) -> DataFrame:
        """The view's change log: its columns plus `_change_type` ('insert'/'delete'),
        `_commit_version` (the refresh id) and `_commit_timestamp`."""
        record = self._published()
        entry = _entry(record, view)
        return readers.changes(self.spark, self.storage.uri(), entry, view, int(record["refresh_id"]))

    def location(self, view: str) -> str:
        """The directory of the view's current version: a plain parquet table."""
        entry = _entry(self._published(), view)
        if entry["version"] is None:
            raise UsageError(f"view '{view}' has no committed version yet; refresh() first")
        return self.storage.uri(str(entry["version"]))

    def _published(self) -> dict[str, Any]:
        self.start()
        if self._record is None:
            self._record = self.job.published()
        return self._record

    def _validate(self, pipeline: Pipeline) -> None:
        """Refuse, before anything runs, to publish a view over a source's name or over
        a catalog table this job does not own (unless `replace`)."""
        if not self.publish:
            return
        taken = {spark_name(s).lower() for s in self._sources}
        self._claim_table("metrics", self.view_prefix + METRICS_TABLE)
        for view in pipeline.view_names():
            for name in self._table_names(view):
                if name.lower() in taken:
                    raise UsageError(
                        f"publishing view '{view}' as '{name}' would hide the source table of that name; "
                        "set view_prefix"
                    )
                self._claim_table(view, name)

    def _table_names(self, view: str) -> list[str]:
        names = [self.view_prefix + view]
        if self._logged(view):
            names.append(f"{self.view_prefix}{view}_changes")
        return names

    def _logged(self, view: str) -> bool:
        logged = self._options["change_log"]
        return logged is True or view.lower() in {v.lower() for v in logged or ()}

    def _claim_table(self, view: str, name: str) -> None:
        """A catalog table of this name must be one this job published, or be replaced."""
        catalog = self.spark.catalog
        if not catalog.tableExists(name):
            return
        owner = self._owner(name)
        if owner == self.storage.uri():
            return
        if not self.replace:
            what = "a table of this job's output " + owner if owner else "a table or view this job did not create"
            raise UsageError(
                f"view '{view}' would be published as '{name}', which is already {what}; "
                "pass replace=True to drop and replace it, or choose another view_prefix"
            )
        if not _is_table(self.spark, name):
            catalog.dropTempView(name)
        else:
            self.spark.sql(f"DROP TABLE IF EXISTS {_quote(name)}")

    def _committed(self, record: dict[str, Any]) -> None:
        """After each commit (and on resume): point the catalog tables at it."""
        self._record = record
        if not self.publish:
            return
        root = self.storage.uri()
        metrics_table = self.view_prefix + METRICS_TABLE
        if self.storage.exists(metrics.METRICS):
            if not self.spark.catalog.tableExists(metrics_table):  # its schema: from its files
                where = _literal(self.storage.uri(metrics.METRICS))
                owned = f"TBLPROPERTIES ({_literal(OWNER_PROPERTY)} = {_literal(root)})"
                self.spark.sql(f"CREATE TABLE {_quote(metrics_table)} USING parquet LOCATION {where} {owned}")
            else:
                self.spark.catalog.refreshTable(metrics_table)
        for view in self.job.dropped:  # removed from the program by the last bootstrap
            for name in (self.view_prefix + view, f"{self.view_prefix}{view}_changes"):
                if self._owner(name) == root:
                    self.spark.sql(f"DROP TABLE {_quote(name)}")
        for view, entry in record["views"].items():
            schema = json.dumps([entry["columns"], entry["types"]])
            if entry["version"] is None or self._shown.get(view) == (entry["version"], record["refresh_id"]):
                continue
            name = self.view_prefix + view
            location = _literal(self.storage.uri(entry["version"]))
            owned = f"{_literal(OWNER_PROPERTY)} = {_literal(root)}, {_literal(SCHEMA_PROPERTY)} = {_literal(schema)}"
            properties = f"TBLPROPERTIES ({owned})"
            if view not in self._shown and self.spark.catalog.tableExists(name) and self._schema(name) != schema:
                self.spark.sql(f"DROP TABLE {_quote(name)}")  # the view's columns changed
                self.spark.sql(f"DROP TABLE IF EXISTS {_quote(name + '_changes')}")
            if self.spark.catalog.tableExists(name):
                self.spark.sql(f"ALTER TABLE {_quote(name)} SET LOCATION {location}")
            else:
                self.spark.sql(f"CREATE TABLE {_quote(name)} USING parquet LOCATION {location} {properties}")
            if entry["change_log"]:
                log = f"{name}_changes"
                if not self.spark.catalog.tableExists(log):
                    fields = readers.schema(entry, view, change_log=True).fields
                    columns = ", ".join(f"{_quote(f.name)} {f.dataType.simpleString()}" for f in fields)
                    where = _literal(self.storage.uri(entry["changes"]))
                    self.spark.sql(
                        f"CREATE TABLE {_quote(log)} ({columns}) USING parquet LOCATION {where} {properties}"
                    )
                else:
                    self.spark.catalog.refreshTable(log)
            self._shown[view] = (entry["version"], record["refresh_id"])

    def _owner(self, name: str) -> str | None:
        return self._property(name, OWNER_PROPERTY)

    def _schema(self, name: str) -> str | None:
        return self._property(name, SCHEMA_PROPERTY)

    def _property(self, name: str, key: str) -> str | None:
        if not self.spark.catalog.tableExists(name) or not _is_table(self.spark, name):
            return None
        rows = self.spark.sql(f"SHOW TBLPROPERTIES {_quote(name)}").collect()
        value = {r[0]: r[1] for r in rows}.get(key)
        return None if value is None else str(value)


EXECUTIONS = ("driver", "distributed")
SCHEMA_PROPERTY = "dbspc.schema"
METRICS_TABLE = "dbspc_metrics"
OWNER_PROPERTY = "dbspc.output"


# Session settings whose other value changes what a query answers, with the value dbspc
# computes (Spark 4's defaults), and what differs otherwise.
_REQUIRED_SETTINGS = {
    "spark.sql.ansi.enabled": (
        "true",
        "division by zero, invalid casts and integer overflow raise in ANSI mode instead of giving NULL or "
        "wrapping, and strings and numbers are coerced by other rules",
    ),
    "spark.sql.decimalOperations.allowPrecisionLoss": (
        "true",
        "the DECIMAL types of arithmetic results (and so their rounding) follow the rule that may lose precision",
    ),
}


def _recursion_limit(spark: SparkSession, given: int | None) -> int:
    """`max_iterations` as given, else the session's spark.sql.cteRecursionLevelLimit (how
    deep Spark lets a recursive CTE go; 100 by default)."""
    if given is not None:
        return given
    value = spark.conf.get("spark.sql.cteRecursionLevelLimit", str(DEFAULT_MAX_ITERATIONS)) or ""
    try:
        return int(value) if int(value) > 0 else DEFAULT_MAX_ITERATIONS
    except ValueError:
        return DEFAULT_MAX_ITERATIONS


def _session_time_zone(spark: SparkSession, dialect: str) -> str:
    """The session's time zone, which the views compute in. A Spark-dialect job refuses a
    session whose settings make Spark answer otherwise than dbspc computes."""
    if dialect in ("spark", "databricks"):
        for key, (value, why) in _REQUIRED_SETTINGS.items():
            current = (spark.conf.get(key, value) or value).strip().lower()
            if current != value:
                raise UsageError(
                    f"this Spark session has {key}={current}; dbspc computes Spark SQL with {key}={value} "
                    f"(Spark 4's default): {why}. Set it to {value} for the session that runs the pipeline"
                )
    return spark.conf.get("spark.sql.session.timeZone") or "UTC"


def _quote(name: str) -> str:
    """A possibly qualified name (db.table) with each part in backquotes."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split("."))


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _is_table(spark: SparkSession, name: str) -> bool:
    """Whether `name` (which exists) is a catalog table, not a temporary view."""
    return not spark.catalog.getTable(name).isTemporary


def _entry(record: Mapping[str, Any], view: str) -> Mapping[str, Any]:
    views = record["views"]
    if view.lower() not in views:
        raise UsageError(f"no view '{view}'; the job has {', '.join(sorted(views))}")
    entry: Mapping[str, Any] = views[view.lower()]
    return entry


def _default_output(spark: SparkSession, checkpoint: Path) -> str:
    """<spark.sql.warehouse.dir>/dbspc/<checkpoint name>-<hash of its path>: the session's
    warehouse. The hash keeps apart checkpoints of the same name (/a/checkpoint and
    /b/checkpoint), which would otherwise write their views over each other's."""
    warehouse = (spark.conf.get("spark.sql.warehouse.dir") or "spark-warehouse").rstrip("/")
    digest = hashlib.sha256(str(checkpoint.resolve()).encode()).hexdigest()[:16]
    return f"{warehouse}/dbspc/{checkpoint.name}-{digest}"

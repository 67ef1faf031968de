"""The refresh protocol: read changes, step the circuit, write outputs, commit, once.

One refresh k, in this order:

1. check every source's schema against the registered one (drift is an error);
2. read each source's changes since its committed offset (plain tables: write
   snapshot k, diff it against the committed snapshot);
3. `Pipeline.step` (atomic: on bad input it raises and changes nothing);
4. write the sink files of refresh k (names derived from k, so a redo overwrites them);
5. write the state parts not yet on disk;
6. switch the manifest (write, fsync, rename): the commit point;
7. publish the committed outputs to readers, and delete what no manifest names.

Why exactly once: the manifest records, in one atomic rename, the state after refresh k,
the offsets consumed up to k, and the sink files of refreshes up to k. A crash before
the rename leaves the previous manifest in force: its state and offsets are from before
refresh k, so the restarted job reads the same changes again (plus any newer ones) and
applies them once, overwriting or deleting the files the crashed attempt wrote (readers
never saw them: they only follow manifests). A crash after the rename leaves refresh k
committed, and a restart only re-publishes it. Nothing in steps 1-5 is visible to
anyone, and step 7 is derived from the manifest, so it can be redone at any time.

If a failure happens after step 3 inside a running process (a full disk, say), the
in-memory pipeline is ahead of the manifest: it is dropped and reloaded from the
checkpoint before the next refresh.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from dbspc.compiler.errors import DbspcError, InputError, Span, SparkExtension, UsageError
from dbspc.compiler.logical.time_zone import zone_id
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.pipeline import CIRCUIT, Pipeline
from dbspc.runtime.refresh import checkpoint, evolve, files, metrics
from dbspc.runtime.refresh import offsets as offset_spans
from dbspc.runtime.refresh import sinks as sink_files
from dbspc.runtime.refresh.checkpoint import Manifest, StateStore
from dbspc.runtime.refresh.engine import Engine
from dbspc.runtime.refresh.failpoints import failpoint
from dbspc.runtime.refresh.schema import (
    SourceColumn,
    columns_of,
    create_table,
    describe,
    drift,
    from_arrow_type,
    spark_schema,
)
from dbspc.runtime.refresh.sinks import Sinks, ViewVersion
from dbspc.runtime.refresh.sources import (
    AppendTable,
    ChangeTable,
    PlainTable,
    Source,
    hash_sum,
    selection,
    spark_name,
    to_zset,
    where,
)
from dbspc.runtime.refresh.sources import (
    describe as describe_source,
)
from dbspc.runtime.refresh.storage import LocalStorage, Storage
from dbspc.runtime.render import state_sizes
from dbspc.runtime.zset import ZSet

_READERS = 8  # sources read at once
LOG = logging.getLogger("dbspc.refresh")
_SLOW_PHASE = 2.0  # seconds: log the phase as it ends


@dataclass
class RefreshResult:
    """What one `refresh()` did."""

    refresh_id: int  # the committed refresh id after the call
    committed: bool  # False when no source had changes: nothing was written
    # each view's output delta of this refresh: a ZSet in driver mode; distributed, a
    # DataFrame of the view's columns plus `_dbspc_weight`
    deltas: Mapping[str, Any]
    rows_read: dict[str, int] = field(default_factory=dict)  # change rows per table
    rows_out: dict[str, int] = field(default_factory=dict)  # delta rows per view
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase
    # (rows, bytes) of state per stateful operator after the refresh, as "%3 integrate"
    state: dict[str, tuple[int, int]] = field(default_factory=dict)


class Job:
    """A compiled program bound to its sources, a checkpoint directory and an output
    directory, refreshed with `refresh()`. Engine-neutral: SparkPipeline wraps it."""

    def __init__(
        self,
        engine: Engine,
        checkpoint_dir: str | Path,
        output: Storage | str | Path,
        sources: Sequence[Source],
        views: Sequence[str],
        *,
        dialect: str = "spark",
        time_zone: str = "UTC",
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        change_log: bool | Sequence[str] = False,
        on_commit: Callable[[dict[str, Any]], None] | None = None,
        validate: Callable[[Pipeline], None] | None = None,
        origins: Sequence[tuple[str, int] | None] = (),
    ) -> None:
        self.engine = engine
        self.checkpoint_dir = Path(checkpoint_dir)
        self.storage: Storage = LocalStorage(output) if isinstance(output, (str, Path)) else output
        self.sources = list(sources)
        self.views = [_statement(v) for v in views]
        self.origins: list[tuple[str, int] | None] = list(origins) if origins else []
        self.unsupported: dict[str, list[tuple[str, str]]] = {}  # table -> (column, type)
        self.dropped: list[str] = []  # views the last bootstrap removed
        self.history: list[dict[str, Any]] = []  # metrics of this process's refreshes
        self.dialect = dialect
        # the session time zone; recorded in the program only when it is not UTC, so the
        # checkpoints of UTC jobs stay as they were
        self.time_zone = "UTC" if zone_id(time_zone) is None else time_zone
        self.max_iterations = max_iterations
        self.change_log = change_log
        self.on_commit = on_commit  # after each commit (and on resume): publish it
        self.validate = validate  # checks the compiled program before anything is read
        self.manifest: Manifest | None = None
        self.columns: dict[str, tuple[SourceColumn, ...]] = {}
        self.program: dict[str, Any] = {}
        self.program_text = ""
        self._pipeline: Pipeline | None = None
        self._store = StateStore(self.checkpoint_dir)
        self._sinks: Sinks | None = None
        self._lock: IO[bytes] | None = None
        self._files_listed: dict[str, list[str]] = {}  # by the last _read
        names = [s.table.lower() for s in self.sources]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise UsageError(f"table(s) {', '.join(dupes)} registered by more than one source")

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def pipeline(self) -> Pipeline:
        self.start()
        assert self._pipeline is not None
        return self._pipeline

    @property
    def refresh_id(self) -> int:
        return self.manifest.refresh_id if self.manifest else 0

    def start(self) -> None:
        """Compile the program against the sources' current schemas and resume from the
        checkpoint, if there is one; tidy whatever an interrupted refresh left behind."""
        if self._pipeline is not None:
            return
        self._take_lock()
        try:
            self._start()
        except BaseException:
            self.close()  # a job that cannot start does not keep the checkpoint locked
            raise

    def _start(self) -> None:
        manifest = checkpoint.load_manifest(self.checkpoint_dir)
        now = {s.table.lower(): self._columns(s) for s in self.sources}
        self.columns = evolve.held_columns(manifest.program, now) if manifest else now
        note = evolve.schema_note(manifest.program, now) if manifest else ""
        with warnings.catch_warnings():
            # registration (check()) said each Spark extension once; starting says none again
            warnings.simplefilter("ignore", SparkExtension)
            pipeline = self._compile(self.columns, note)
        if self.validate is not None:
            self.validate(pipeline)
        views = {v: (pipeline.view_columns(v), pipeline.view_types(v)) for v in pipeline.view_names()}
        for v, (names, types) in views.items():
            _check_view_name(v)
            _check_column_names(v, names)
            spark_schema([f"c{i}" for i in range(len(types))], types, f"view '{v}'")
        logged = list(views) if self.change_log is True else [v.lower() for v in self.change_log or ()]
        unknown = sorted(set(logged) - set(views))
        if unknown:
            raise UsageError(f"change_log names unknown view(s) {', '.join(unknown)}")
        self._sinks = Sinks(self.storage, views, logged)
        if manifest is not None:
            self._check_outputs(manifest)
            if checkpoint.program_hash(self.program) == manifest.program_hash and self._resumable(manifest, pipeline):
                self._resume(manifest, pipeline)
            else:  # another program, or the same one compiled to another circuit
                evolve.check_compatible(self.checkpoint_dir, manifest.program, self.program)
                manifest = self._bootstrap(pipeline, manifest)
        self.manifest = manifest
        self._pipeline = pipeline
        self._collect_garbage()
        if manifest is not None:
            self._publish()

    def _resumable(self, manifest: Manifest, pipeline: Pipeline) -> bool:
        """Whether the checkpoint's state belongs to this circuit. A newer dbspc may plan
        the same views into other operators; their state is then bootstrapped from the
        checkpoint's tables, as for an edited program. (A manifest from before circuits
        were recorded is judged by its traces' names.)"""
        if DISTRIBUTED in manifest.pipeline:
            return True  # _resume refuses it, naming the execution mode that wrote it
        recorded = manifest.pipeline.get(CIRCUIT)
        if recorded is not None and recorded != pipeline.circuit_digest():
            return False
        return self._store.fits(manifest, pipeline.state_traces(), pipeline.state_aliases())

    def _resume(self, manifest: Manifest, pipeline: Pipeline) -> None:
        """Refill the pipeline's state from the checkpoint (the driver holds it all)."""
        if DISTRIBUTED in manifest.pipeline:
            raise UsageError(
                f"checkpoint {self.checkpoint_dir} was written by a distributed job; resume it with "
                "execution='distributed', or start over with a new checkpoint"
            )
        self._store.load(manifest, pipeline.state_traces(), pipeline.state_aliases())
        pipeline.restored(manifest.pipeline)

    def check(self) -> Pipeline:
        """Compile the program against the sources' current schemas, without touching
        the checkpoint: registration errors surface at once."""
        return self._compile({s.table.lower(): self._columns(s) for s in self.sources}, "")

    def _check_outputs(self, manifest: Manifest) -> None:
        missing = [
            version.part(b)
            for section in manifest.sinks.values()
            for version in [ViewVersion.from_json(section)]
            if version.version is not None
            for b in version.parts[:1]
            if not self.storage.exists(version.part(b))
        ]
        if missing:
            raise UsageError(
                f"the outputs of checkpoint {self.checkpoint_dir} are missing from {self.storage} "
                f"(e.g. {missing[0]}); resume with the same output directory, or start over with a new checkpoint"
            )

    def _bootstrap(self, pipeline: Pipeline, manifest: Manifest) -> Manifest:
        """Carry the checkpoint over to a changed program (runtime/refresh/evolve.py): one
        step over the stored contents of the tables, committed as a refresh of its own."""
        sinks = self._sinks
        assert sinks is not None
        k = manifest.refresh_id + 1
        outputs = pipeline.step(evolve.stored_tables(self.checkpoint_dir, manifest, pipeline))
        committed: dict[str, Any] = {}
        deltas: dict[str, ZSet] = {}
        for v in pipeline.view_names():
            types = pipeline.view_types(v)
            before = manifest.sinks.get(v)
            if before is not None and before.get("schema") == sinks.schema(v):
                committed[v] = before
                old = sinks.contents(v, before)
                deltas[v] = ZSet.concat([outputs[v], old.negate()], types).consolidate()
            else:  # a new view, or one whose columns changed: a new table and change log
                deltas[v] = outputs[v]
                self.storage.remove(f"{v}/changes")
        section = sinks.write(k, deltas, committed)
        state, known = self._store.save(k, pipeline.state_traces())
        tables = set(pipeline.program.tables)
        new = Manifest(
            refresh_id=k,
            program_hash=checkpoint.program_hash(self.program),
            program=self.program,
            offsets={t: o for t, o in manifest.offsets.items() if t in tables},
            snapshots={t: p for t, p in manifest.snapshots.items() if t in tables},
            state=state,
            pipeline=pipeline.state_meta(),
            sinks=section,
            checks={t: c for t, c in manifest.checks.items() if t in tables},
        )
        checkpoint.commit(self.checkpoint_dir, new)
        self._store.known = known
        self.dropped = sorted(set(manifest.sinks) - set(section))
        changed = sorted(v for v in section if v not in committed)
        LOG.info(
            f"refresh {k} committed: the program changed, so it was carried over from the checkpoint's stored "
            f"tables without reading the sources; new or changed views {', '.join(changed) or '-'}; "
            f"dropped views {', '.join(self.dropped) or '-'}"
        )
        for v in self.dropped:
            self.storage.remove(v)
        return new

    def close(self) -> None:
        """Release the checkpoint directory (also released when the process ends)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None
        self._pipeline = None

    def _take_lock(self) -> None:
        if self._lock is not None:
            return
        try:
            self.checkpoint_dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.checkpoint_dir / "LOCK", "ab")
        except OSError as e:
            raise UsageError(
                f"checkpoint directory {self.checkpoint_dir} cannot be written ({e.strerror or e}); a job needs a "
                "checkpoint directory of its own that it can write"
            ) from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise UsageError(f"checkpoint {self.checkpoint_dir} is in use by another running job") from None
        try:
            _claim(self.storage, self.checkpoint_dir)
        except OSError as e:
            lock.close()
            raise UsageError(f"output directory {self.storage} cannot be written ({e.strerror or e})") from None
        except BaseException:
            lock.close()
            raise
        self._lock = lock

    def _columns(self, spec: Source) -> tuple[SourceColumn, ...]:
        """A source's data columns from the engine's schema; its meta columns checked."""
        schema = self.engine.schema(spark_name(spec), spec.table)
        fields = {f.name.lower(): f for f in schema}
        checks: list[tuple[str | None, Callable[[pa.DataType], bool], str]] = []
        if isinstance(spec, (ChangeTable, AppendTable)):
            checks.append((spec.offset, pa.types.is_integer, "an integer offset"))
        if isinstance(spec, ChangeTable):
            checks.append((spec.weight, pa.types.is_integer, "an integer weight"))
            checks.append((spec.op, _is_string, "a string operation"))
        for name, kind, what in checks:
            if name is None:
                continue
            found = fields.get(name.lower())
            if found is None:
                raise UsageError(f"{where(spec)} has no column '{name}' ({what} column is expected)")
            if not kind(found.type):
                raise UsageError(
                    f"column '{name}' of {where(spec)} is {_sql_name(found.type)}; {what} column is expected"
                )
        columns = self._readable(spec, schema)
        if not columns:
            raise UsageError(f"{where(spec)} has no data columns besides its offset/weight/op columns")
        return columns

    def _observe(self, result: RefreshResult, pipeline: Pipeline) -> None:
        """One log line, one `metrics()` record and one metrics-table row per refresh."""
        assert self.manifest is not None
        tables = list(pipeline.tables_apart().values())
        record = metrics.record(result, self.manifest.offsets, tables, time.time())
        self.history.append(record)
        LOG.info(metrics.line(record))
        try:
            metrics.write(self.storage, record)
        except OSError as e:  # the refresh has committed: a lost metrics row must not undo that
            LOG.warning(f"refresh {result.refresh_id}: its metrics row could not be written ({e})")

    def metrics(self) -> list[dict[str, Any]]:
        """This process's refreshes, oldest first: offsets, rows in and out, state rows
        and bytes, and seconds per phase (as the log line and the metrics table)."""
        return list(self.history)

    def _readable(self, spec: Source, schema: pa.Schema) -> tuple[SourceColumn, ...]:
        """The data columns of a source schema, minus those of types dbspc cannot hold
        (the engine gives them Arrow type null plus the original type in metadata):
        those are noted, and reported only if a view reads one."""
        skipped = [(f.name, (f.metadata or {}).get(b"type", b"?").decode()) for f in schema if pa.types.is_null(f.type)]
        if skipped:
            self.unsupported[spec.table.lower()] = skipped
        meta = [*spec.meta_columns(), *(name for name, _ in skipped)]
        return columns_of(schema, spec.table, meta)

    def _compile(self, columns: Mapping[str, tuple[SourceColumn, ...]], note: str) -> Pipeline:
        """The program (DDL from the sources' columns, then the views), compiled; an error
        in a view is reported at the view's own line and column, naming the view."""
        ddl = [create_table(table, cols, self.dialect) for table, cols in columns.items()]
        self.program = {
            "dialect": self.dialect,
            "tables": {table: describe(cols) for table, cols in columns.items()},
            "sources": [describe_source(s) for s in self.sources],
            "views": self.views,
        }
        if self.time_zone != "UTC":
            self.program["time_zone"] = self.time_zone
        self.program_text = "\n".join([*ddl, *self.views]) + "\n"
        try:
            return Pipeline.from_sql(
                self.program_text, self.dialect, True, self.max_iterations, time_zone=self.time_zone
            )
        except DbspcError as e:
            if e.span is None or e.span.line <= len(ddl):
                raise
            raise self._in_view(e, e.span.line - len(ddl), note) from e

    def _in_view(self, e: DbspcError, line: int, note: str) -> DbspcError:
        assert e.span is not None
        for index, text in enumerate(self.views):
            lines = text.count("\n") + 1
            if line > lines:
                line -= lines
                continue
            view = _view_at(text, line) or f"#{index + 1}"
            origin = self.origins[index] if index < len(self.origins) else None
            hint = note if "cannot be resolved" in e.message or "does not exist" in e.message else ""
            if "does not exist" in e.message and "table or view" in e.message:
                hint += " (register it as a source: change_table, change_feed, append_table or plain_table)"
            if "cannot be resolved" in e.message and self.unsupported:
                shown = ", ".join(f"{t}.{c} ({kind})" for t, cols in self.unsupported.items() for c, kind in cols)
                hint += f" (columns dbspc cannot read, of types it does not support: {shown})"
            if origin is None:
                return type(e)(f"view '{view}': {e.message}{hint}", Span(line, e.span.col))
            filename, first = origin
            return type(e)(f"{filename}:{first + line - 1}:{e.span.col}: view '{view}': {e.message}{hint}")
        return e

    # -- refresh -------------------------------------------------------------------------

    def refresh(self) -> RefreshResult:
        """Pull every source's changes since the last refresh, step the circuit once,
        write the outputs and commit. Bad input raises a DbspcError naming the table and
        columns; then nothing is written and the next refresh starts from the same
        committed state."""
        pipeline = self.pipeline
        sinks = self._sinks
        assert sinks is not None
        manifest = self.manifest
        k = self.refresh_id + 1
        clock = _Clock(k)
        changes, rows_read, offsets, snapshots, checks, pending = self._read(k)
        clock.lap("transfer", f" ({sum(rows_read.values())} change rows read); computing the views")
        if manifest is not None and not any(rows_read.values()):
            for path in pending:
                files.remove(path)
            empty = {v: ZSet.empty(pipeline.view_types(v)) for v in pipeline.view_names()}
            return RefreshResult(self.refresh_id, False, empty, rows_read, timings=clock.done())
        try:
            stepped = self._step(pipeline, {t: c for t, c in changes.items() if rows_read.get(t)})
        except DbspcError as e:
            for path in pending:
                files.remove(path)
            raise type(e)(f"refresh {k}: {e.message}{self._context(e.message, offsets)}") from e
        clock.lap("compute")
        failpoint("stepped")
        try:
            sink_section, rows_out, deltas = self._write_outputs(k, stepped, manifest.sinks if manifest else {})
            clock.lap("write_back")
            state, known, meta = self._save_state(k, pipeline)
            new = Manifest(
                refresh_id=k,
                program_hash=checkpoint.program_hash(self.program),
                program=self.program,
                offsets=offsets,
                snapshots=snapshots,
                state=state,
                pipeline=meta,
                sinks=sink_section,
                checks=checks,
                files=self._files_listed,
            )
            checkpoint.commit(self.checkpoint_dir, new)
        except BaseException:
            # The pipeline stepped past the committed state: reload before going on.
            self._pipeline = None
            raise
        clock.lap("checkpoint")
        self.manifest = new
        self._store.known = known
        self._publish()
        self._collect_garbage()
        clock.lap("publish")
        held = state_sizes(pipeline.executor.circuit, pipeline.executor.state_sizes())
        result = RefreshResult(k, True, deltas, rows_read, rows_out, clock.done(), held)
        self._observe(result, pipeline)
        return result

    # -- what the execution mode decides (runtime/distributed/pipeline_job.py: distributed)

    def _fetch(
        self, index: int, spec: Source, k: int, after: int | None, snapshot: str | None, within: list[str] | None
    ) -> Any:
        """One source's changes for refresh k as the engine hands them over (`within`:
        the files that hold every row above `after`, if known: `_read`)."""
        columns = self.columns[spec.table.lower()]
        if isinstance(spec, PlainTable):
            return self.engine.snapshot_diff(
                spark_name(spec),
                [c.name for c in columns],
                self.checkpoint_dir / snapshot_path(index, k),
                self.checkpoint_dir / snapshot if snapshot else None,
            )
        return self.engine.read_after(spark_name(spec), selection(spec, columns), spec.offset, after, within)

    def _as_change(self, spec: Source, data: Any) -> Pulled:
        """What `_fetch` returned, as the change the step takes."""
        z, top = to_zset(spec, data, self.columns[spec.table.lower()])
        return Pulled(z, len(z), top, hash_sum(data) if top is not None else 0)

    def _step(self, pipeline: Pipeline, changes: dict[str, Any]) -> Any:
        """Step the views over the changes of the tables that have some; nothing is
        committed until the manifest is."""
        return pipeline.step(changes)

    def _write_outputs(
        self, k: int, stepped: Any, committed: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, int], Mapping[str, Any]]:
        """Refresh k's view versions and staged change logs, from what `_step` returned:
        the manifest's sinks section, the rows of each view's delta, and the deltas."""
        sinks = self._sinks
        assert sinks is not None
        return sinks.write(k, stepped, committed), {v: len(z) for v, z in stepped.items()}, stepped

    def _save_state(self, k: int, pipeline: Pipeline) -> tuple[dict[str, list[str]], Any, dict[str, Any]]:
        """Write the state after refresh k: the manifest's state and pipeline sections."""
        state, known = self._store.save(k, pipeline.state_traces())
        return state, known, pipeline.state_meta()

    def _read(
        self, k: int
    ) -> tuple[dict[str, Any], dict[str, int], dict[str, int | None], dict[str, str], dict[str, Any], list[Path]]:
        """Every source's changes for refresh k and their row counts, with the offsets,
        snapshots and checks that committing them would record, and the snapshot files
        written on the way.

        Sources are read concurrently: with Spark each read is a small job whose time is
        mostly scheduling latency, which overlaps well. Each change or append table is
        also checked: its rows at offsets already committed must be those committed."""
        manifest = self.manifest
        offsets: dict[str, int | None] = dict(manifest.offsets) if manifest else {}
        snapshots: dict[str, str] = dict(manifest.snapshots) if manifest else {}
        checks: dict[str, Any] = dict(manifest.checks) if manifest else {}
        pending = [
            self.checkpoint_dir / snapshot_path(i, k) for i, s in enumerate(self.sources) if isinstance(s, PlainTable)
        ]

        def fetch(index: int, spec: Source) -> Any:
            table = spec.table.lower()
            columns = self.columns[table]
            now = self._readable(spec, self.engine.schema(spark_name(spec), spec.table))
            held = {c.name.lower() for c in columns}
            # Columns no view reads may come and go (evolve.py); the others may not change.
            now = tuple(c for c in now if c.name.lower() in held)
            problem = drift(spec.table, spark_name(spec), columns, now)
            if problem:
                raise InputError(problem)
            return self._fetch(index, spec, k, offsets.get(table), snapshots.get(table), added_files(table))

        def added_files(table: str) -> list[str] | None:
            """The files listed now that the last committed refresh had not listed, if it
            listed the table and every file it listed is still there: the rows above the
            committed offset are all in these, since that refresh read every row of the
            files it listed and committed the highest offset it read."""
            before, now = files_read.get(table), listed.get(table)
            if offsets.get(table) is None or before is None or now is None or not set(before) <= set(now):
                return None
            return sorted(set(now) - set(before))

        def committed_rows(spec: Source) -> list[int] | None:
            """[count, hash sum] of the rows at committed offsets, as they are now: those
            recorded if no file was removed and no added file holds such rows."""
            table = spec.table.lower()
            upto = offsets.get(table)
            if isinstance(spec, PlainTable) or upto is None:
                return None
            added, recorded = added_files(table), checks.get(table)
            if added is not None and recorded:
                if not added or self.engine.count_upto(spark_name(spec), added, spec.offset, upto) == 0:
                    return offset_spans.total(recorded)
            columns = [src for src, _ in selection(spec, self.columns[table])]
            return list(self.engine.summary(spark_name(spec), columns, spec.offset, upto))

        changes: dict[str, Any] = {}
        rows: dict[str, int] = {}
        files_read = dict(manifest.files) if manifest else {}
        try:
            with ThreadPoolExecutor(max_workers=min(2 * len(self.sources), _READERS)) as pool:
                # Listed before anything is read: a file that comes later is new next time.
                logged = [s for s in self.sources if not isinstance(s, PlainTable)]
                found_files = pool.map(lambda s: self.engine.files(spark_name(s)), logged)
                listed = {s.table.lower(): f for s, f in zip(logged, found_files, strict=True) if f is not None}
                futures = [pool.submit(fetch, i, s) for i, s in enumerate(self.sources)]
                found = [pool.submit(committed_rows, s) for s in self.sources]
                # Wait for every read before looking at any result, so that on an error no
                # read is still writing a snapshot when the snapshots are removed.
                wait([*futures, *found])
            read = [f.result() for f in futures]  # a drifted schema is reported first
            for spec, check in zip(self.sources, found, strict=True):
                self._verify(k, spec, offsets.get(spec.table.lower()), checks, check.result())
            for index, (spec, data) in enumerate(zip(self.sources, read, strict=True)):
                table = spec.table.lower()
                pulled = self._as_change(spec, data)
                changes[table], rows[table] = pulled.change, pulled.rows
                if isinstance(spec, PlainTable):
                    snapshots[table] = snapshot_path(index, k)
                    continue
                if pulled.top is not None:
                    checks[table] = offset_spans.record(checks.get(table, []), pulled.top, pulled.rows, pulled.hashes)
                    offsets[table] = pulled.top
                failpoint(f"read {table}")
        except BaseException:
            for path in pending:
                files.remove(path)
            raise
        self._files_listed = listed
        return changes, rows, offsets, snapshots, checks, pending

    def _verify(self, k: int, spec: Source, upto: int | None, checks: dict[str, Any], found: list[int] | None) -> None:
        """Rows at an offset already committed were applied when it was: one arriving
        (or changing) later would be skipped for good, so it is an error, not ignored.
        Rows that are gone below the oldest offset still present were cleaned up after
        they were applied (retention): the check goes on over the offsets above."""
        table = spec.table.lower()
        if found is None or upto is None or isinstance(spec, PlainTable):
            return
        recorded = checks.get(table)
        if recorded is None:  # a checkpoint from before checks were kept: start now
            checks[table] = [[upto, *found]]
            return
        if offset_spans.total(recorded) == list(found):
            return
        if int(found[0]) < offset_spans.total(recorded)[0] and self._cleaned_up(k, spec, upto, checks, recorded):
            return
        select = selection(spec, self.columns[table])
        rows = self.engine.sample(spark_name(spec), select, spec.offset, upto).to_pylist()
        names = [c.name for c in self.columns[table]] + [src for src, _ in select[len(self.columns[table]) :]]
        shown = (
            "; rows there now include e.g. ("
            + ", ".join(f"{n}={v!r}" for n, v in zip(names, rows[0].values(), strict=False))
            + ")"
            if rows
            else ""
        )
        committed = offset_spans.total(recorded)[0]
        raise InputError(
            f"refresh {k}: {where(spec)} has rows at offsets already committed that were not there "
            f"(or were different) when they were read: {committed} row(s) with {spec.offset} <= {upto} "
            f"were committed by refresh {k - 1}, now {found[0]}"
            + (" with different contents" if committed == found[0] else "")
            + f"{shown}. A new batch must get an offset above every committed one ({spec.offset} > {upto}); "
            "such rows would be skipped for good, so nothing was refreshed"
        )

    def _cleaned_up(
        self, k: int, spec: ChangeTable | AppendTable, upto: int, checks: dict[str, Any], recorded: Any
    ) -> bool:
        """Whether fewer rows at committed offsets is a clean-up of the oldest ones: the
        rows above the span bound just under the oldest offset left are all intact."""
        table = spec.table.lower()
        oldest = self.engine.oldest_offset(spark_name(spec), spec.offset, upto)
        columns = [src for src, _ in selection(spec, self.columns[table])]
        bound = upto if oldest is None else offset_spans.retained_from(recorded, oldest)
        if bound is None:
            return False
        kept = offset_spans.above(recorded, bound)
        now = self.engine.summary(spark_name(spec), columns, spec.offset, upto, after=bound)
        if list(now) != offset_spans.total(kept):
            return False
        LOG.warning(
            f"refresh {k}: {where(spec)} no longer holds its rows at {spec.offset} <= {bound}"
            + (f" (the oldest left is {oldest})" if oldest is not None else "")
            + ": they were applied before and cleaned up since (retention); the check goes on above"
        )
        checks[table] = kept
        return True

    def _context(self, message: str, offsets: Mapping[str, int | None]) -> str:
        """Where the rows of the table an error names came from."""
        committed = self.manifest.offsets if self.manifest else {}
        for spec in self.sources:
            if f"table '{spec.table.lower()}'" not in message:
                continue
            if isinstance(spec, PlainTable):
                return f" (table '{spec.table}' is diffed from Spark table '{spark_name(spec)}')"
            lo = committed.get(spec.table.lower())
            span = (
                f"{spec.offset} > {lo} and <= {offsets.get(spec.table.lower())}"
                if lo is not None
                else (f"{spec.offset} <= {offsets.get(spec.table.lower())}")
            )
            return f" (read from Spark table '{spark_name(spec)}', rows with {span})"
        return ""

    # -- outputs ----------------------------------------------------------------------

    def published(self) -> dict[str, Any]:
        """The committed outputs, as readers see them (see readers.py)."""
        pipeline = self.pipeline
        sinks = self._sinks
        assert sinks is not None
        sections = self.manifest.sinks if self.manifest else {}
        views = {}
        for v in pipeline.view_names():
            views[v] = {
                "columns": list(pipeline.view_columns(v)),
                "types": [t.sql() for t in pipeline.view_types(v)],
                "version": ViewVersion.from_json(sections.get(v)).version,
                "change_log": v in sinks.change_log,
                "changes": f"{v}/changes",
            }
        return sink_files.published(self.refresh_id, views)

    def contents(self, view: str) -> ZSet:
        """A view's committed contents read back with polars (tests, tools)."""
        sinks = self._sinks
        assert sinks is not None and self.pipeline is not None
        return sinks.contents(view.lower(), (self.manifest.sinks if self.manifest else {}).get(view.lower()))

    def _publish(self) -> None:
        """Make the committed refresh visible: its change files, then the record readers
        follow, then (on_commit) the catalog. Redone on every start, so idempotent."""
        sinks = self._sinks
        assert sinks is not None
        sinks.promote_changes(self.refresh_id)
        record = self.published()
        sink_files.publish(self.storage, record)
        failpoint("published")
        if self.on_commit is not None:
            self.on_commit(record)

    def _collect_garbage(self) -> None:
        manifest = self.manifest
        sinks = self._sinks
        assert sinks is not None
        for path in self.checkpoint_dir.iterdir():
            if files.is_temporary(path):
                files.remove(path)
        for name in self.storage.listdir(""):
            if name.startswith(".") and ".tmp-" in name:
                self.storage.remove(name)
        self._store.collect_garbage(manifest)
        sinks.collect_garbage(manifest.sinks if manifest else None)
        failpoint("collected")


@dataclass
class Pulled:
    """One source's change for a refresh: what the step takes (a ZSet, or distributed a
    DataFrame), its rows, and for change and append tables the highest offset read and
    the sum of the rows' hashes (offsets.py)."""

    change: Any
    rows: int
    top: int | None
    hashes: int


DISTRIBUTED = "distributed"  # the manifest's pipeline section of a distributed job


class _Clock:
    """Seconds per phase of a refresh; a phase that took long is logged as it ends, so a
    long load shows its progress before the refresh's own line."""

    def __init__(self, refresh_id: int = 0) -> None:
        self.refresh_id = refresh_id
        self.start = self.last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, name: str, detail: str = "") -> None:
        now = time.perf_counter()
        self.laps[name] = now - self.last
        self.last = now
        if self.laps[name] >= _SLOW_PHASE:
            LOG.info(f"refresh {self.refresh_id}: {name} took {self.laps[name]:.1f} s{detail}")

    def done(self) -> dict[str, float]:
        self.laps["total"] = time.perf_counter() - self.start
        return self.laps


OWNER = "_dbspc_owner.json"


def _claim(output: Storage, checkpoint_dir: Path) -> None:
    """Make `output` this checkpoint's own, or refuse if another checkpoint owns it: two
    jobs writing one output directory would overwrite each other's view files. Of two
    jobs claiming at once, exactly one creates the marker."""
    mine = str(checkpoint_dir.resolve())
    if not output.exists(OWNER):
        output.create_new(OWNER, json.dumps({"checkpoint": mine}).encode())
    owner = str(json.loads(output.read_bytes(OWNER)).get("checkpoint"))
    if owner != mine:
        raise UsageError(
            f"output directory {output} belongs to the job of checkpoint {owner}, not to checkpoint {mine}; "
            "each job needs its own output directory (pass output=)"
        )


def _is_string(dtype: pa.DataType) -> bool:
    return bool(pa.types.is_string(dtype) or pa.types.is_large_string(dtype))


def _sql_name(dtype: pa.DataType) -> str:
    """A column's type as SQL names it (engines hand over only types dbspc can hold)."""
    try:
        return from_arrow_type(dtype, "", "").sql()
    except InputError:
        return str(dtype)


def snapshot_path(index: int, refresh_id: int) -> str:
    """Where plain table number `index` is snapshotted at refresh `refresh_id`."""
    return f"snapshots/{index:04d}/r{refresh_id:08d}"


def _statement(sql: str) -> str:
    text = sql.strip()
    return text if text.endswith(";") else text + ";"


_VIEW_NAME = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:MATERIALIZED\s+|TEMP(?:ORARY)?\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\"\w.]+)",
    re.IGNORECASE,
)


def _view_at(text: str, line: int) -> str | None:
    """The name of the view whose CREATE statement is the last one starting at or
    before `line` of `text`."""
    name = None
    for m in _VIEW_NAME.finditer(text):
        if text.count("\n", 0, m.start()) + 1 > line:
            break
        name = m.group(1).strip('`"')
    return name


def _check_column_names(view: str, names: Sequence[str]) -> None:
    """A table cannot have two columns of one name (Spark compares them ignoring case)."""
    seen: dict[str, str] = {}
    for name in names:
        if name.lower() in seen:
            raise UsageError(
                f"view '{view}' has two columns named '{seen[name.lower()]}' and '{name}'; "
                "give them distinct aliases (a table's column names must differ, ignoring case)"
            )
        seen[name.lower()] = name


def _check_view_name(view: str) -> None:
    if not view or view.startswith(".") or os.sep in view or view.startswith("_"):
        raise UsageError(f"view name '{view}' cannot name an output directory; rename the view")

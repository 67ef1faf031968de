"""A compiled circuit run on Spark's executors, one Spark job per stage (issue 12).

    stages = SparkStages(spark, compiled.circuit, "/shared/state/sales", buckets=8)
    result = stages.refresh({"orders": orders_changes_df})   # DataFrames, never collected
    result.deltas["revenue"]                                   # the view's delta, a DataFrame

A change DataFrame holds the table's columns in order, then an integer weight (+1 an
insert, -1 a delete). Between stages, rows travel as Arrow IPC blobs in rows
`(ch, bucket, data)`: one blob per producing task, channel and target bucket, so a
shuffle moves a stage's whole output in a few large rows and every task decodes its
bucket's batches in one call per blob. A stage is `groupBy("bucket").applyInArrow`:
per bucket, the StageExecutor of plan.py's stage, with its state from bucket_state.py,
evaluated by the runtime's kernels. Its output (the next stages' channels and the
views' deltas) is written as parquet under `x/r<k>/s<stage>`, so no stage is computed
twice when several later ones read it.

The driver plans jobs and switches COMMITTED.json; it holds no state and no rows.
A refresh is committed when every stage's job succeeded: a failure before leaves the
committed refresh in force, and the next refresh repeats it (bucket_state.py).
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbspc.compiler.catalog import Column, TableSchema
from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.errors import DbspcError, InputError, UsageError
from dbspc.compiler.types import SqlType
from dbspc.runtime.distributed import bucket_state
from dbspc.runtime.distributed.buckets import split
from dbspc.runtime.distributed.plan import Part, Plan, plan, whole_row
from dbspc.runtime.distributed.stage import StageExecutor, StageResult
from dbspc.runtime.distributed.table_stage import TABLE_STAGE, TableShare
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.schema import quote, spark_schema
from dbspc.runtime.refresh.sinks import table_schema, to_table
from dbspc.runtime.refresh.sources import naive_utc
from dbspc.runtime.zset import WEIGHT, ZSet, col_name

BLOB = "ch INT, bucket INT, data BINARY"
_BLOB_ARROW = pa.schema([("ch", pa.int32()), ("bucket", pa.int32()), ("data", pa.binary())])
WEIGHT_COLUMN = "_dbspc_weight"  # a delta's weight, beside the view's own columns
HEARTBEAT = -1  # in a stage's input: a row that makes a bucket's task run with no input
FACTS = "facts"  # x/r<k>/facts/s<stage>-b<bucket>.json: what each task did
_MARK = "<<dbspc-error>>"  # brackets a dbspc error's message inside Spark's task failure
# operators whose output can change with no input: every bucket runs every refresh
_CLOCKED = (op.Differentiate, op.Delta0)


def output_tag(view_index: int) -> int:
    """The channel number under which a stage emits a view's delta."""
    return -2 - view_index


_BLOB_ROWS = 1 << 17  # rows per blob: a JVM holds a few blobs at once in its heap
_ROW_GROUP_BYTES = 16 << 20  # parquet row groups of exchange files, for the same reason


def encode(z: ZSet) -> bytes:
    buffer = io.BytesIO()
    z.frame.write_ipc(buffer, compression="lz4")
    return buffer.getvalue()


def pieces(ch: int, bucket: int, z: ZSet) -> list[tuple[int, int, bytes]]:
    """Blob rows of a batch: one per _BLOB_ROWS rows."""
    n = len(z)
    return [(ch, bucket, encode(ZSet(z.frame.slice(i, _BLOB_ROWS), z.types))) for i in range(0, n, _BLOB_ROWS)]


def decode(data: bytes, types: tuple[SqlType, ...]) -> ZSet:
    return ZSet(pl.read_ipc(io.BytesIO(data)), types)


def blobs(rows: list[tuple[int, int, bytes]]) -> pa.RecordBatch:
    arrays = [pa.array([r[i] for r in rows], f.type) for i, f in enumerate(_BLOB_ARROW)]
    return pa.RecordBatch.from_arrays(arrays, schema=_BLOB_ARROW)


@dataclass
class Refreshed:
    refresh: int
    deltas: dict[str, DataFrame]  # each view's delta: its columns plus WEIGHT_COLUMN
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage's job
    stage_files: list[str] = field(default_factory=list)

    facts: Path | None = None  # the directory of the tasks' facts

    def metrics(self) -> list[dict[str, Any]]:
        """What each task did, as it wrote it next to the exchange files (no Spark job):
        per stage and bucket, seconds loading state, computing and writing it, state
        bytes read and written, state held, its views' delta rows and weight sums, and
        the Python worker (pid) that ran it."""
        found = [files.read_json(p) for p in sorted(self.facts.glob("*.json"))] if self.facts else []
        return sorted(found, key=lambda m: (m["stage"], m["bucket"]))


class SparkStages:
    def __init__(
        self,
        spark: SparkSession,
        circuit: Circuit,
        state: str | Path,
        buckets: int = 8,
        columns: Mapping[str, Sequence[str]] | None = None,
        tables: Mapping[str, TableSchema] | None = None,
    ) -> None:
        """`state`: a directory every executor reads and writes (a shared file system);
        `columns`: each view's column names (else c0, c1, ...); `tables`: the tables'
        schemas, whose NOT NULL columns are checked (else every table the circuit reads,
        all columns nullable)."""
        self.spark = spark
        self.plan: Plan = plan(circuit)
        self.tables = dict(tables) if tables is not None else _tables_of(circuit)
        self.root = Path(state).resolve()
        self.buckets = buckets
        self.views = sorted(circuit.outputs().items(), key=lambda kv: kv[0])
        self.columns = {name: tuple(cols) for name, cols in (columns or {}).items()}
        self._bucket_labels: list[int] | None = None

    @property
    def committed(self) -> int:
        return bucket_state.committed(self.root)

    def refresh(
        self,
        changes: Mapping[str, DataFrame],
        base: int | None = None,
        convert: Mapping[str, Convert] | None = None,
    ) -> Refreshed:
        """Apply one change DataFrame per table; return each view's delta.

        By default a change holds the table's columns then an integer weight, and the
        refresh is committed here (COMMITTED.json). A caller with its own commit point
        (the SparkPipeline's manifest) passes `base`, its committed refresh, commits
        refresh base + 1 itself, and may pass `convert`: per table, how an Arrow batch
        of its change DataFrame becomes a ZSet (raising InputError on a bad row).

        Stage 0 checks the changes against the tables (table_stage.py); then one Spark
        job per stage, each writing its output (the later stages' channels, the views'
        deltas, the tasks' facts) as parquet that the later jobs read: a stage is
        computed once even when several later stages read it. (One job for the whole
        refresh, with each stage's output persisted instead, made a plan that grows
        with the product of the stages' fan-outs.)"""
        own_commit = base is None
        base = self.committed if base is None else base
        k = base + 1
        bucket_state.forget_uncommitted(self.root, base)
        labels = self._labels()
        out = self.root / "x" / f"r{k:08d}"
        files.remove(out)  # an earlier attempt's outputs and facts
        timings: dict[str, float] = {}
        made: list[str] = []
        unknown = sorted(set(changes) - set(self.tables))
        if unknown:
            raise UsageError(f"no table {', '.join(unknown)} in the program; it has {', '.join(sorted(self.tables))}")
        present = dict(changes)
        if present:
            started = time.perf_counter()
            path = str(out / f"s{TABLE_STAGE}")
            self._check_tables(present, dict(convert or {}), base, k, labels, path)
            made.append(path)
            timings["tables"] = time.perf_counter() - started
        for stage in self.plan.stages:
            started = time.perf_counter()
            wanted = sorted(set(stage.inputs.values()))
            inputs = [self.spark.read.parquet(*made).where(F.col("ch").isin(wanted))] if made else []
            inputs.append(self._heartbeats(stage.index, labels))
            task = _stage_task(self.plan, stage.index, str(self.root), base, k, labels, self.views)
            path = str(out / f"s{stage.index}")
            with self._own_shuffles():
                _write(reduce(DataFrame.unionByName, inputs).groupBy("bucket").applyInArrow(task, BLOB), path)
            made.append(path)
            timings[f"stage {stage.index}"] = time.perf_counter() - started
        if own_commit:
            bucket_state.commit(self.root, k)
        self._drop_exchanges(keep=k - 1)
        return Refreshed(k, self._deltas(made), timings, made, out / FACTS)

    def _check_tables(
        self,
        changes: Mapping[str, DataFrame],
        convert: Mapping[str, Convert],
        base: int,
        k: int,
        labels: list[int],
        path: str,
    ) -> None:
        """Stage 0's job: every change to the buckets of its rows, checked there, then
        sent on to the source channels."""
        names = sorted(self.tables)
        routes: dict[str, list[tuple[int, Part]]] = {name: [] for name in names}
        for ch, channel in enumerate(self.plan.channels):
            o = self.plan.circuit[channel.node]
            if isinstance(o, op.Source) and o.name in routes:
                assert channel.to is not None  # rows read from a table are always moved
                routes[o.name].append((ch, channel.to))
        encoded = [
            df.mapInArrow(
                _encode_table(
                    names.index(t), self.tables[t].types, convert.get(t) or _weighted(self.tables[t].types), labels
                ),
                BLOB,
            )
            for t, df in sorted(changes.items())
        ]
        task = _table_task(names, self.tables, routes, str(self.root), base, k, labels)
        with self._own_shuffles():
            _write(reduce(DataFrame.unionByName, encoded).groupBy("bucket").applyInArrow(task, BLOB), path)

    def _labels(self) -> list[int]:
        """Per bucket, the value of the `bucket` column that Spark's hash partitioning
        sends to shuffle partition b: with as many partitions as buckets, each bucket is
        one task, so the state spreads over the executors' workers."""
        if self._bucket_labels is None:
            b = self.buckets
            rows = (
                self.spark.range(64 * b)
                .selectExpr("CAST(id AS INT) AS x", f"pmod(hash(CAST(id AS INT)), {b}) AS p")
                .groupBy("p")
                .agg(F.min("x").alias("x"))
                .collect()
            )
            found = {int(r["p"]): int(r["x"]) for r in rows}
            self._bucket_labels = [found[p] for p in range(b)]
        return self._bucket_labels

    @contextmanager
    def _own_shuffles(self) -> Iterator[None]:
        """One shuffle partition per bucket for a stage's job (restored after it). AQE,
        if the session has it on, may still coalesce the partitions of a small change
        into a few tasks: fewer Python tasks, but a bucket then moves between workers
        more often (a cache miss reads it from storage)."""
        conf = self.spark.conf
        key = "spark.sql.shuffle.partitions"
        before = conf.get(key, None)
        conf.set(key, str(self.buckets))
        try:
            yield
        finally:
            if before is None:
                conf.unset(key)
            else:
                conf.set(key, before)

    # -- the pieces of a refresh ---------------------------------------------------------

    def _heartbeats(self, stage: int, labels: list[int]) -> DataFrame:
        nodes = self.plan.stages[stage - 1].nodes
        clocked = any(isinstance(self.plan.circuit[n], _CLOCKED) and not self.plan.single(n) for n in nodes)
        buckets = range(self.buckets) if clocked else range(1)
        rows = [(HEARTBEAT, labels[b], b"") for b in buckets]
        return self.spark.createDataFrame(rows, BLOB)

    def _deltas(self, made: list[str]) -> dict[str, DataFrame]:
        deltas = {}
        for i, (name, n) in enumerate(self.views):
            types = self.plan.circuit[n].types
            names = self.columns.get(name) or tuple(f"c{j}" for j in range(len(types)))
            with_weight = [*types, SqlType("BIGINT")]
            schema = _small_lists(table_schema([*names, WEIGHT_COLUMN], with_weight))
            ddl = spark_schema([quote(c) for c in (*names, WEIGHT_COLUMN)], with_weight, f"view '{name}'")
            rows = self.spark.read.parquet(*made).where(F.col("ch") == output_tag(i))
            deltas[name] = rows.mapInArrow(_decode_view(types, names, schema), ddl)
        return deltas

    def _drop_exchanges(self, keep: int) -> None:
        """Exchange files of refreshes before `keep` (the last one's deltas stay readable)."""
        for d in (self.root / "x").glob("r*"):
            if d.name[1:].isdigit() and int(d.name[1:]) < keep:
                files.remove(d)


def _small_lists(schema: pa.Schema) -> pa.Schema:
    """Arrow batches handed to Spark hold ARRAY columns as `list` (Spark refuses `large_list`)."""

    def small(t: pa.DataType) -> pa.DataType:
        return pa.list_(small(t.value_type)) if pa.types.is_large_list(t) or pa.types.is_list(t) else t

    return pa.schema([pa.field(f.name, small(f.type)) for f in schema])


def _write(df: DataFrame, path: str) -> None:
    """Run a stage's job; a dbspc error raised in a task is raised here as itself."""
    try:
        df.write.mode("overwrite").option("parquet.block.size", _ROW_GROUP_BYTES).parquet(path)
    except Exception as e:
        found = re.search(f"{_MARK}(.*?){_MARK}", str(e), flags=re.DOTALL)
        if found is None:
            raise
        raise InputError(found.group(1)) from None


# -- what runs on the executors ------------------------------------------------------------


Convert = Callable[[pa.Table], ZSet]
H = TypeVar("H", bound=bucket_state.Held)
R = TypeVar("R")


def _tables_of(circuit: Circuit) -> dict[str, TableSchema]:
    found = {o.name: o.types for o in circuit.nodes if isinstance(o, op.Source)}
    return {
        name: TableSchema(name, tuple(Column(col_name(i), t) for i, t in enumerate(types)))
        for name, types in found.items()
    }


def _weighted(types: tuple[SqlType, ...]) -> Convert:
    """A change of the default shape: the table's columns in order, then its weight."""

    def convert(batch: pa.Table) -> ZSet:
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        frame = frame.rename(dict(zip(frame.columns, [*(col_name(i) for i in range(len(types))), WEIGHT], strict=True)))
        return ZSet.from_frame(naive_utc(frame, types), types)

    return convert


def _encode_table(
    index: int, types: tuple[SqlType, ...], convert: Convert, labels: list[int]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    to = whole_row(len(types))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            try:
                z = convert(pa.Table.from_batches([batch]))
            except DbspcError as e:
                raise RuntimeError(f"{_MARK}{e.message}{_MARK}") from None
            moved = sorted(split(z, to, 0, len(labels)).items())
            yield blobs([row for b, part in moved for row in pieces(index, labels[b], part)])

    return run


def _table_task(
    names: list[str],
    tables: Mapping[str, TableSchema],
    routes: Mapping[str, list[tuple[int, Part]]],
    root: str,
    base: int,
    refresh: int,
    labels: list[int],
) -> Callable[[tuple[pa.Scalar, ...], pa.Table], pa.Table]:
    buckets = len(labels)
    bucket_of_label = {label: b for b, label in enumerate(labels)}

    def run(key: tuple[pa.Scalar, ...], table: pa.Table) -> pa.Table:
        b = bucket_of_label[int(key[0].as_py())]
        where = Path(root)
        received: dict[str, list[ZSet]] = {}
        for i, data in zip(table.column("ch").to_pylist(), table.column("data").to_pylist(), strict=True):
            name = names[i]
            received.setdefault(name, []).append(decode(data, tables[name].types))
        changes = {name: ZSet.concat(parts, parts[0].types) for name, parts in received.items()}
        def check(share: TableShare) -> tuple[dict[str, ZSet], list[Callable[[], None]]]:
            return share.check(changes)

        opened, out, clock, written = _step_bucket(where, TABLE_STAGE, b, base, refresh, lambda: TableShare(tables),
                                                   check)
        rows = [
            row
            for name, z in out.items()
            for ch, to in routes[name]
            for t, part in split(z, to, b, buckets).items()
            for row in pieces(ch, labels[t], part)
        ]
        sizes = opened.executor.state_sizes().values()
        _facts(where, refresh, TABLE_STAGE, b, changes.values(), opened, clock, written, sizes)
        return pa.Table.from_batches([blobs(rows)])

    return run


def _step_bucket(
    where: Path,
    stage: int,
    bucket: int,
    base: int,
    refresh: int,
    make: Callable[[], H],
    step: Callable[[H], tuple[R, list[Callable[[], None]]]],
) -> tuple[bucket_state.Bucket[H], R, list[float], int]:
    """One bucket's step in a task: its state opened as of committed refresh `base`,
    `step` run (its state changes applied only once it succeeded), the state saved as of
    `refresh`. A dbspc error (bad input, an overflow) is raised marked, so that the driver
    raises it as itself; on any failure the cached state, which may be half-way, is
    dropped. Returns the bucket, the step's result, the clock (started, loaded, computed,
    saved) and the state bytes written."""
    clock = [time.perf_counter()]
    opened = bucket_state.open_bucket(where, stage, bucket, base, make)
    clock.append(time.perf_counter())
    try:
        result, commits = step(opened.executor)
        for commit in commits:
            commit()
        opened.executor.steps += 1
        clock.append(time.perf_counter())
        written = bucket_state.save_bucket(where, stage, bucket, opened, refresh)
    except DbspcError as e:
        bucket_state.forget(where, stage, bucket)
        raise RuntimeError(f"{_MARK}{e.message}{_MARK}") from None
    except BaseException:
        bucket_state.forget(where, stage, bucket)
        raise
    clock.append(time.perf_counter())
    return opened, result, clock, written


def _facts(
    where: Path,
    refresh: int,
    stage: int,
    bucket: int,
    inputs: Iterable[ZSet],
    opened: bucket_state.Bucket[Any],
    clock: list[float],
    written: int,
    sizes: Iterable[tuple[int, int]],
    outputs: Mapping[str, ZSet] | None = None,
) -> None:
    """Write a task's facts for `Refreshed.metrics`. `clock`: started, loaded, computed,
    saved. `outputs`: per view, its delta's rows and weight sum from this task."""
    held = list(sizes)
    facts = {
        "stage": stage,
        "bucket": bucket,
        "pid": os.getpid(),
        "input_rows": sum(len(z) for z in inputs),
        "load_s": clock[1] - clock[0],
        "compute_s": clock[2] - clock[1],
        "write_s": clock[3] - clock[2],
        "cached": opened.cached,
        "state_read_bytes": opened.bytes_read,
        "state_written_bytes": written,
        "state_rows": sum(r for r, _ in held),
        "state_bytes": sum(n for _, n in held),
        "outputs": {name: [len(z), int(z.frame.get_column(WEIGHT).sum())] for name, z in (outputs or {}).items()},
    }
    files.write_json(where / "x" / f"r{refresh:08d}" / FACTS / f"s{stage}-b{bucket}.json", facts)


def _stage_task(
    plan: Plan, stage: int, root: str, base: int, refresh: int, labels: list[int], views: list[tuple[str, int]]
) -> Callable[[tuple[pa.Scalar, ...], pa.Table], pa.Table]:
    tags = {name: output_tag(i) for i, (name, _) in enumerate(views)}
    buckets = len(labels)
    bucket_of_label = {label: b for b, label in enumerate(labels)}

    def run(key: tuple[pa.Scalar, ...], table: pa.Table) -> pa.Table:
        b = bucket_of_label[int(key[0].as_py())]
        where = Path(root)
        received: dict[int, list[ZSet]] = {}
        for ch, data in zip(table.column("ch").to_pylist(), table.column("data").to_pylist(), strict=True):
            if ch >= 0:  # one blob per producing task: a few rows, not the data's rows
                received.setdefault(ch, []).append(decode(data, plan.circuit[plan.channels[ch].node].types))
        inputs = {ch: ZSet.concat(parts, parts[0].types) for ch, parts in received.items()}
        def run_stage(executor: StageExecutor) -> tuple[StageResult, list[Callable[[], None]]]:
            result = executor.run(inputs)
            return result, result.commits

        opened, result, clock, written = _step_bucket(
            where, stage, b, base, refresh, lambda: StageExecutor(plan, stage, b, buckets), run_stage
        )
        moved = result.moved.items()
        rows = [row for ch, by_bucket in moved for t, z in by_bucket.items() for row in pieces(ch, labels[t], z)]
        rows += [row for name, z in result.outputs.items() for row in pieces(tags[name], labels[b], z)]
        sizes = opened.executor.state_sizes().values()
        _facts(where, refresh, stage, b, inputs.values(), opened, clock, written, sizes, result.outputs)
        return pa.Table.from_batches([blobs(rows)])

    return run


def _decode_view(
    types: tuple[SqlType, ...], names: tuple[str, ...], schema: pa.Schema
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for data in batch.column("data").to_pylist():
                z = decode(data, types)
                yield from to_table(z.frame.rename({WEIGHT: WEIGHT_COLUMN}), names, schema).to_batches()

    return run

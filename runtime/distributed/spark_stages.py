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
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.errors import DbspcError, InputError
from dbspc.compiler.types import SqlType
from dbspc.runtime.distributed import bucket_state
from dbspc.runtime.distributed.buckets import split
from dbspc.runtime.distributed.plan import Part, Plan, plan
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.schema import quote, spark_schema
from dbspc.runtime.refresh.sinks import table_schema, to_table
from dbspc.runtime.refresh.sources import naive_utc
from dbspc.runtime.zset import WEIGHT, ZSet, col_name

BLOB = "ch INT, bucket INT, data BINARY"
_BLOB_ARROW = pa.schema([("ch", pa.int32()), ("bucket", pa.int32()), ("data", pa.binary())])
WEIGHT_COLUMN = "_dbspc_weight"  # a delta's weight, beside the view's own columns
HEARTBEAT = -1  # in a stage's input: a row that makes a bucket's task run with no input
METRICS = -1  # in a stage's output: a task's facts (JSON), read by Refreshed.metrics()
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

    def metrics(self, spark: SparkSession) -> list[dict[str, Any]]:
        """What each task did (one small Spark read): per stage and bucket, seconds loading
        state, computing and writing it, state bytes read and written, state held, and
        the Python worker (pid) that ran it."""
        rows = spark.read.parquet(*self.stage_files).where(F.col("ch") == METRICS).select("data").collect()
        return sorted((json.loads(bytes(r["data"])) for r in rows), key=lambda m: (m["stage"], m["bucket"]))


class SparkStages:
    def __init__(
        self,
        spark: SparkSession,
        circuit: Circuit,
        state: str | Path,
        buckets: int = 8,
        columns: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """`state`: a directory every executor reads and writes (a shared file system);
        `columns`: each view's column names (else c0, c1, ...)."""
        self.spark = spark
        self.plan: Plan = plan(circuit)
        self.root = Path(state).resolve()
        self.buckets = buckets
        self.views = sorted(circuit.outputs().items(), key=lambda kv: kv[0])
        self.columns = {name: tuple(cols) for name, cols in (columns or {}).items()}
        self._bucket_labels: list[int] | None = None

    @property
    def committed(self) -> int:
        return bucket_state.committed(self.root)

    def refresh(self, changes: dict[str, DataFrame]) -> Refreshed:
        """Apply one change DataFrame per table; commit; return each view's delta.

        One Spark job per stage, each writing its output (the later stages' channels,
        the views' deltas, the tasks' facts) as parquet that the later jobs read: a
        stage is computed once even when several later stages read it. (One job for
        the whole refresh, with each stage's output persisted instead, made a plan that
        grows with the product of the stages' fan-outs.)"""
        base = self.committed
        k = base + 1
        bucket_state.forget_uncommitted(self.root, base)
        labels = self._labels()
        out = self.root / "x" / f"r{k:08d}"
        timings: dict[str, float] = {}
        made: list[str] = []
        for stage in self.plan.stages:
            started = time.perf_counter()
            wanted = sorted(set(stage.inputs.values()))
            parts = [self._source_blobs(ch, changes, labels) for ch in wanted]
            inputs = [p for p in parts if p is not None]
            if made:
                inputs.append(self.spark.read.parquet(*made).where(F.col("ch").isin(wanted)))
            inputs.append(self._heartbeats(stage.index, labels))
            task = _stage_task(self.plan, stage.index, str(self.root), base, k, labels, self.views)
            path = str(out / f"s{stage.index}")
            with self._own_shuffles():
                _write(reduce(DataFrame.unionByName, inputs).groupBy("bucket").applyInArrow(task, BLOB), path)
            made.append(path)
            timings[f"stage {stage.index}"] = time.perf_counter() - started
        bucket_state.commit(self.root, k)
        self._drop_exchanges(keep=k - 1)
        return Refreshed(k, self._deltas(made), timings, made)

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

    def _source_blobs(self, ch: int, changes: dict[str, DataFrame], labels: list[int]) -> DataFrame | None:
        channel = self.plan.channels[ch]
        o = self.plan.circuit[channel.node]
        if not isinstance(o, op.Source) or o.name not in changes:
            return None
        assert channel.to is not None  # rows read from a table are always moved
        fn = _encode_source(ch, channel.to, o.types, labels)
        return changes[o.name].mapInArrow(fn, BLOB)

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


def _encode_source(
    ch: int, to: Part, types: tuple[SqlType, ...], labels: list[int]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            frame = frame.rename(dict(zip(frame.columns, [*(col_name(i) for i in range(len(types))), WEIGHT],
                                          strict=True)))
            z = ZSet.from_frame(naive_utc(frame, types), types)
            moved = sorted(split(z, to, 0, len(labels)).items())
            yield blobs([row for b, part in moved for row in pieces(ch, labels[b], part)])

    return run


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
        started = time.perf_counter()
        opened = bucket_state.open_bucket(where, plan, stage, b, buckets, base)
        loaded = time.perf_counter()
        try:
            result = opened.executor.run(inputs)
            for commit in result.commits:
                commit()
            opened.executor.steps += 1
            computed = time.perf_counter()
            written = bucket_state.save_bucket(where, stage, b, opened, refresh)
        except DbspcError as e:  # bad input (an overflow, a cast): name it, not a worker traceback
            bucket_state.forget(where, stage, b)
            raise RuntimeError(f"{_MARK}{e.message}{_MARK}") from None
        except BaseException:
            bucket_state.forget(where, stage, b)
            raise
        moved = result.moved.items()
        rows = [row for ch, by_bucket in moved for t, z in by_bucket.items() for row in pieces(ch, labels[t], z)]
        rows += [row for name, z in result.outputs.items() for row in pieces(tags[name], labels[b], z)]
        sizes = opened.executor.state_sizes()
        facts = {
            "stage": stage,
            "bucket": b,
            "pid": os.getpid(),
            "input_rows": sum(len(z) for z in inputs.values()),
            "load_s": loaded - started,
            "compute_s": computed - loaded,
            "write_s": time.perf_counter() - computed,
            "cached": opened.cached,
            "state_read_bytes": opened.bytes_read,
            "state_written_bytes": written,
            "state_rows": sum(r for r, _ in sizes.values()),
            "state_bytes": sum(n for _, n in sizes.values()),
        }
        rows.append((METRICS, labels[b], json.dumps(facts).encode()))
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

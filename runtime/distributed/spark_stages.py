"""A compiled circuit run on Spark's executors, its stages in one Spark job (issue 12).

    stages = SparkStages(spark, compiled.circuit, "/shared/state/sales", buckets=8)
    result = stages.refresh({"orders": orders_changes_df})   # DataFrames, never collected
    result.deltas["revenue"]                                   # the view's delta, a DataFrame

A change DataFrame holds the table's columns in order, then an integer weight (+1 an
insert, -1 a delete). One job reads the changes and sends each row to its bucket; then
one job over the slots (slots.py) runs the stages as phases: a slot's task runs, for
each of its buckets, the StageExecutor of plan.py's stage with its state from bucket_state.py,
evaluated by the runtime's kernels. Rows move between stages as files on the shared
storage (exchange.py), and the views' deltas are parquet files of Arrow IPC blobs in
rows `(ch, bucket, data)` under `x/r<k>/v`, which the views' writes read as DataFrames.

The driver plans jobs and switches COMMITTED.json; it holds no state and no rows.
A refresh is committed when every stage succeeded: a failure before leaves the
committed refresh in force, and the next refresh repeats it (bucket_state.py).
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from dbspc.compiler.catalog import Column, TableSchema
from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.errors import DbspcError, UsageError
from dbspc.compiler.types import SqlType
from dbspc.runtime.distributed import bucket_state, exchange
from dbspc.runtime.distributed.buckets import split
from dbspc.runtime.distributed.plan import Part, Plan, plan, whole_row
from dbspc.runtime.distributed.slots import MARK, Slots, raise_marked, slot_buckets
from dbspc.runtime.distributed.stage import StageExecutor, StageResult
from dbspc.runtime.distributed.table_stage import TABLE_STAGE, TableShare, share_state
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.schema import quote, spark_schema
from dbspc.runtime.refresh.sinks import table_schema, to_table
from dbspc.runtime.refresh.sources import HASH, OFFSET, combine, naive_utc
from dbspc.runtime.zset import WEIGHT, ZSet, col_name

BLOB = "ch INT, bucket INT, data BINARY"
_BLOB_ARROW = pa.schema([("ch", pa.int32()), ("bucket", pa.int32()), ("data", pa.binary())])
WEIGHT_COLUMN = "_dbspc_weight"  # a delta's weight, beside the view's own columns
FACTS = "facts"  # x/r<k>/facts/s<stage>-s<slot>.json: what each bucket's step did
VIEWS = "v"  # x/r<k>/v/s<stage>-s<slot>.parquet: the views' deltas, as blobs
# operators whose output can change with no input: every bucket runs every refresh
_CLOCKED = (op.Differentiate, op.Delta0)


def refresh_dir(root: Path, k: int) -> Path:
    """`x/r<k>` under the state directory: refresh k's exchange, views' deltas, facts and
    phase markers, deleted before each attempt of k and two refreshes after it."""
    return root / "x" / f"r{k:08d}"


def output_tag(view_index: int) -> int:
    """The channel number under which a stage emits a view's delta."""
    return -2 - view_index


_BLOB_ROWS = 1 << 17  # rows per blob: a JVM holds a few blobs at once in its heap
_SEND_ROWS = 1 << 17  # rows per file of a change sent to a slot
# a send task's facts; the hash sums as text, since they may outgrow a BIGINT
_SENT = "rows BIGINT, top BIGINT, hi STRING, lo STRING"
_SENT_ARROW = pa.schema([("rows", pa.int64()), ("top", pa.int64()), ("hi", pa.string()), ("lo", pa.string())])


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


@dataclass(frozen=True)
class Sent:
    """What a change's send job found: rows sent, and with offsets their top offset and
    hash sum."""

    rows: int
    top: int | None
    hashes: int


class Deltas(Mapping[str, DataFrame]):
    """Each view's delta as a DataFrame, planned when first asked for: a refresh whose
    caller reads none (the pipeline writes the views from the files) plans none (~60 ms
    of Spark planning a refresh)."""

    def __init__(self, names: Sequence[str], plan: Callable[[], dict[str, DataFrame]]) -> None:
        self._names, self._plan = list(names), plan
        self._frames: dict[str, DataFrame] | None = None

    def __getitem__(self, view: str) -> DataFrame:
        if view not in self._names:
            raise KeyError(view)
        if self._frames is None:
            self._frames = self._plan()
        return self._frames[view]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class Refreshed:
    refresh: int
    deltas: Mapping[str, DataFrame]  # each view's delta: its columns plus WEIGHT_COLUMN
    timings: dict[str, float] = field(default_factory=dict)  # the stages' seconds, and their jobs
    stage_files: list[str] = field(default_factory=list)

    facts: Path | None = None  # the directory of the tasks' facts

    def metrics(self) -> list[dict[str, Any]]:
        """What each task did, as it wrote it next to the exchange files (no Spark job):
        per stage and bucket, seconds loading state, computing and writing it, state
        bytes read and written, state held, its views' delta rows and weight sums, and
        the Python worker (pid) that ran it."""
        return read_facts(self.facts) if self.facts else []


def read_facts(where: Path) -> list[dict[str, Any]]:
    """The facts the tasks of a refresh wrote in `where` (`Refreshed.metrics`)."""
    found = [f for p in sorted(where.glob("*.json")) for f in files.read_json(p)]
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
        self._slots: Slots | None = None
        self._dropping: threading.Thread | None = None

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
        passes `base`, its committed refresh, commits refresh base + 1 itself, and may
        pass `convert`: per table, how an Arrow batch of its change DataFrame becomes a
        ZSet (raising InputError on a bad row). The SparkPipeline calls the three steps
        itself (`begin`, `send` while it reads its sources, `step`)."""
        own_commit = base is None
        base = self.committed if base is None else base
        self.begin(base)
        started = time.perf_counter()
        for table, df in sorted(changes.items()):
            self.send(table, df, base, (convert or {}).get(table))
        sent = time.perf_counter() - started
        result = self.step(base, set(changes), own_commit)
        result.timings = {"read": sent, **result.timings}
        return result

    def begin(self, base: int) -> None:
        """Before refresh base + 1 sends anything: an earlier attempt's files go."""
        bucket_state.forget_uncommitted(self.root, base)
        files.remove(self._out(base + 1))

    def send(
        self, table: str, df: DataFrame, base: int, convert: Convert | None = None, offsets: bool = False
    ) -> Sent:
        """One job: the change's rows converted and checked in the tasks that read them,
        and sent to the buckets where the table's share is kept (plan.py's `Check`).

        With `offsets`, `df` is a change table's rows above the committed offset, with the
        columns OFFSET and HASH (`SparkEngine.changes_after`): the job also returns their
        top offset and hash sum, for the offsets and the checks. One pass reads one
        listing of the source's files, so the facts and the rows sent always agree."""
        if table not in self.tables:
            raise UsageError(f"no table {table} in the program; it has {', '.join(sorted(self.tables))}")
        types = self.tables[table].types
        task = _send_table(
            sorted(self.tables).index(table),
            types,
            convert or _weighted(types),
            self._share(table),
            self.buckets,
            self.slots().n,
            str(self._out(base + 1)),
            offsets,
        )
        try:
            found = df.mapInArrow(task, _SENT).collect()
        except Exception as e:
            raise_marked(e)
            raise
        tops = [int(r["top"]) for r in found if r["top"] is not None]
        return Sent(
            sum(int(r["rows"]) for r in found),
            max(tops) if tops else None,
            combine(sum(int(r["hi"]) for r in found), sum(int(r["lo"]) for r in found)),
        )

    def step(
        self,
        base: int,
        tables: Collection[str],
        own_commit: bool = False,
        then: Sequence[Callable[[int], None]] = (),
    ) -> Refreshed:
        """Refresh base + 1 over what `send` sent for `tables`: the stages as phases of
        one job over the slots (slots.py's `run_phases`), so that a bucket's task runs
        in the worker that holds its state. Each change is checked against its table
        (table_stage.py) in the stage the plan names: stage 0, a phase of its own, or
        the stage reading the table. A stage's rows for later stages are files the
        later phases read; the views' deltas are parquet files of blobs. `then`: phases
        to run in the same job after the stages (the pipeline's view write)."""
        k = base + 1
        out = self._out(k)
        slots = self.slots()
        stages = [TABLE_STAGE] if set(tables) & set(self.plan.checked_in(TABLE_STAGE)) else []
        stages += [stage.index for stage in self.plan.stages]
        root = str(self.root)
        phases = [
            _stage_task(self.plan, s, self.tables, root, base, k, slots, self.views, bool(s) and self._clocked(s))
            for s in stages
        ]
        phases += then
        started = time.perf_counter()
        rounds = slots.run_phases(phases, out / "phases")
        timings = {"stages": time.perf_counter() - started, "jobs": float(rounds)}
        views = out / VIEWS
        if not any(views.glob("*.parquet")):
            # a directory Spark can read
            files.write_parquet(views / "none.parquet", pa.Table.from_batches([blobs([])]))
        if own_commit:
            bucket_state.commit(self.root, k)
        self._drop_exchanges(keep=k - 1)
        made = [str(views)]
        deltas = Deltas([name for name, _ in self.views], partial(self._deltas, made))
        return Refreshed(k, deltas, timings, made, out / FACTS)

    def slots(self) -> Slots:
        if self._slots is None:
            self._slots = Slots(self.spark, self.buckets)
        return self._slots

    def _share(self, table: str) -> Part:
        """How the table's share, and so its change, is spread over the buckets."""
        check = self.plan.checks.get(table)
        return check.share if check is not None else whole_row(len(self.tables[table].types))

    def _out(self, k: int) -> Path:
        return refresh_dir(self.root, k)

    def _clocked(self, stage: int) -> bool:
        """Whether every bucket runs the stage, input or not (its output can change
        without input); else bucket 0 always runs, and the others when rows reach them."""
        nodes = self.plan.stages[stage - 1].nodes
        return any(isinstance(self.plan.circuit[n], _CLOCKED) and not self.plan.single(n) for n in nodes)

    # -- the pieces of a refresh ---------------------------------------------------------

    def _deltas(self, made: list[str]) -> dict[str, DataFrame]:
        deltas = {}
        found = self.spark.read.schema(BLOB).parquet(*made)  # a known schema: no footers read to infer it
        for i, (name, n) in enumerate(self.views):
            types = self.plan.circuit[n].types
            names = self.columns.get(name) or tuple(f"c{j}" for j in range(len(types)))
            with_weight = [*types, SqlType("BIGINT")]
            schema = _small_lists(table_schema([*names, WEIGHT_COLUMN], with_weight))
            ddl = spark_schema([quote(c) for c in (*names, WEIGHT_COLUMN)], with_weight, f"view '{name}'")
            rows = found.where(F.col("ch") == output_tag(i))
            deltas[name] = rows.mapInArrow(_decode_view(types, names, schema), ddl)
        return deltas

    def _drop_exchanges(self, keep: int) -> None:
        """Exchange files of refreshes before `keep` (the last one's deltas stay readable),
        deleted beside the next refresh: a refresh leaves hundreds of small files, ~0.1 s
        of unlinking that no one waits for."""
        old = [d for d in (self.root / "x").glob("r*") if d.name[1:].isdigit() and int(d.name[1:]) < keep]
        if self._dropping is not None:
            self._dropping.join()
        self._dropping = threading.Thread(target=_remove_all, args=(old,), daemon=True)
        self._dropping.start()


def _remove_all(paths: list[Path]) -> None:
    for path in paths:
        files.remove(path)


def _small_lists(schema: pa.Schema) -> pa.Schema:
    """Arrow batches handed to Spark hold ARRAY columns as `list` (Spark refuses `large_list`)."""

    def small(t: pa.DataType) -> pa.DataType:
        return pa.list_(small(t.value_type)) if pa.types.is_large_list(t) or pa.types.is_list(t) else t

    return pa.schema([pa.field(f.name, small(f.type)) for f in schema])


# -- what runs on the executors ------------------------------------------------------------


Convert = Callable[[pa.Table], ZSet]
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


def _send_table(
    index: int,
    types: tuple[SqlType, ...],
    convert: Convert,
    to: Part,
    buckets: int,
    slots: int,
    out: str,
    offsets: bool,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A task of the job reading a change: its rows converted, checked and sent to their
    buckets, a file per target slot and _SEND_ROWS rows (Arrow batches are ~10k rows: a
    file per batch would make the load millions of small files). It returns one row of
    facts (`SparkStages.send`). `to`: how the table's share is spread."""
    stream = exchange.table_stream(index)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        partition = TaskContext.get().partitionId()  # type: ignore[union-attr]
        box = exchange.Outbox(Path(out), slots, f"p{partition}")
        rows = high = low = 0
        top: int | None = None
        for batch in batches:
            if offsets and batch.num_rows:  # a NULL offset is reported by `convert`
                most = pc.max(batch.column(OFFSET)).as_py()
                top = most if top is None or (most is not None and most > top) else top
                h = batch.column(HASH).to_numpy(zero_copy_only=False).astype(np.int64)
                high += int((h >> 32).sum())
                low += int((h & 0xFFFFFFFF).sum())
                batch = batch.drop_columns([HASH])
            if batch.num_rows == 0:
                continue
            try:
                z = convert(pa.Table.from_batches([batch]))
            except DbspcError as e:
                raise RuntimeError(f"{MARK}{e.message}{MARK}") from None
            rows += batch.num_rows
            box.put(stream, split(z, to, 0, buckets))
            box.flush_full(_SEND_ROWS)
        box.flush()
        facts = {"rows": [rows], "top": [top], "hi": [str(high)], "lo": [str(low)]}
        yield pa.RecordBatch.from_pydict(facts, schema=_SENT_ARROW)

    return run


def _step_bucket(
    where: Path,
    held: Sequence[tuple[int, Callable[[], bucket_state.Held]]],
    bucket: int,
    base: int,
    refresh: int,
    step: Callable[[list[Any]], tuple[R, list[Callable[[], None]]]],
) -> tuple[list[bucket_state.Bucket[Any]], R, list[float], int]:
    """One bucket's step in a task: the states it holds (per state stage, how to make an
    empty one) opened as of committed refresh `base`, `step` run on them (their changes
    applied only once it succeeded), and saved as of `refresh`. A dbspc error (bad input,
    an overflow) is raised marked, so that the driver raises it as itself; on any failure
    the cached states, which may be half-way, are dropped. Returns the opened states,
    the step's result, the clock (started, loaded, computed, saved) and the bytes written."""
    clock = [time.perf_counter()]
    opened = [bucket_state.open_bucket(where, stage, bucket, base, make) for stage, make in held]
    clock.append(time.perf_counter())
    try:
        result, commits = step([o.executor for o in opened])
        for commit in commits:
            commit()
        for o in opened:
            o.executor.steps += 1
        clock.append(time.perf_counter())
        saved = zip(held, opened, strict=True)
        written = sum(bucket_state.save_bucket(where, stage, bucket, o, refresh) for (stage, _), o in saved)
    except BaseException as e:
        for stage, _ in held:
            bucket_state.forget(where, stage, bucket)
        if isinstance(e, DbspcError):
            raise RuntimeError(f"{MARK}{e.message}{MARK}") from None
        raise
    clock.append(time.perf_counter())
    return opened, result, clock, written


def _facts(
    stage: int,
    bucket: int,
    inputs: Iterable[ZSet],
    opened: Sequence[bucket_state.Bucket[Any]],
    clock: list[float],
    written: int,
    outputs: Mapping[str, ZSet] | None = None,
) -> dict[str, Any]:
    """A bucket's facts for `Refreshed.metrics`. `clock`: started, loaded, computed,
    saved. `outputs`: per view, its delta's rows and weight sum from this bucket."""
    held = [size for o in opened for size in o.executor.state_sizes().values()]
    facts = {
        "stage": stage,
        "bucket": bucket,
        "pid": os.getpid(),
        "input_rows": sum(len(z) for z in inputs),
        "load_s": clock[1] - clock[0],
        "compute_s": clock[2] - clock[1],
        "write_s": clock[3] - clock[2],
        "cached": all(o.cached for o in opened),
        "state_read_bytes": sum(o.bytes_read for o in opened),
        "state_written_bytes": written,
        "state_rows": sum(r for r, _ in held),
        "state_bytes": sum(n for _, n in held),
        "outputs": {name: [len(z), int(z.frame.get_column(WEIGHT).sum())] for name, z in (outputs or {}).items()},
    }
    return facts


def _step(
    plan: Plan, changes: Mapping[str, ZSet], inputs: Mapping[int, ZSet], executors: list[Any]
) -> tuple[tuple[dict[str, ZSet], StageResult | None], list[Callable[[], None]]]:
    """A bucket's step: the changes checked against its share of their tables (if any
    came), then the stage (unless it is stage 0), which reads each checked change on
    the channels of its table: a table checked in a stage is shared by the channels'
    own key, so its rows are already in their bucket."""
    commits: list[Callable[[], None]] = []
    checked: dict[str, ZSet] = {}
    if changes:
        share: TableShare = executors.pop(0)
        checked, commits = share.check(changes)
    if not executors:
        return (checked, None), commits
    fed = dict(inputs)
    for table, z in checked.items():
        for ch, _ in plan.checks[table].routes:
            fed[ch] = z
    result = executors[0].run(fed)
    return (checked, result), commits + result.commits


def _stage_task(
    plan: Plan,
    stage: int,
    tables: Mapping[str, TableSchema],
    root: str,
    base: int,
    refresh: int,
    slots: Slots,
    views: list[tuple[str, int]],
    clocked: bool,
) -> Callable[[int], None]:
    """A stage in a slot. Stage 0 checks the changes of the tables checked there and
    moves them on to the channels reading them. A circuit's stage steps each of the
    slot's buckets that rows reached (every one if the stage is clocked, and bucket 0
    always), after checking the changes of the tables checked in it; its rows for later
    stages are sent on, its views' deltas written as blobs for the views' tables."""
    names = sorted(tables)
    here = plan.checked_in(stage)
    shares = {t: tables[t] for t in here}
    streams = {exchange.table_stream(names.index(t)): tables[t].types for t in here}
    fed_here = {ch for t in here for ch, _ in plan.checks[t].routes}  # by the checks, not by files
    for ch in sorted(set(plan.stages[stage - 1].inputs.values()) - fed_here) if stage else ():
        streams[exchange.channel_stream(ch)] = plan.circuit[plan.channels[ch].node].types
    tags = {name: output_tag(i) for i, (name, _) in enumerate(views)}
    buckets, n = slots.buckets, slots.n  # not the Slots: it holds the session

    def run(slot: int) -> None:
        where = Path(root)
        out = refresh_dir(where, refresh)
        inbox = exchange.receive(out, slot, streams)
        box = exchange.Outbox(out, n, f"s{slot}")
        views: list[tuple[int, int, bytes]] = []
        facts: list[dict[str, Any]] = []
        for b in slot_buckets(slot, n, buckets):
            received = inbox.get(b, {})
            changes = {names[int(s[1:])]: z for s, z in received.items() if s[0] == "t"}
            inputs = {int(s[1:]): z for s, z in received.items() if s[0] == "c"}
            if not (changes if stage == 0 else received or clocked or b == 0):
                continue
            held: list[tuple[int, Callable[[], bucket_state.Held]]] = []
            if changes:
                held.append((share_state(stage), partial(TableShare, shares)))
            if stage:
                held.append((stage, partial(StageExecutor, plan, stage, b, buckets)))
            opened, (checked, result), clock, written = _step_bucket(
                where, held, b, base, refresh, partial(_step, plan, changes, inputs)
            )
            if result is None:  # stage 0: the checked changes go to the channels' buckets
                for table, z in checked.items():
                    for ch, to in plan.checks[table].routes:
                        box.put(exchange.channel_stream(ch), split(z, to, b, buckets))
                facts.append(_facts(stage, b, changes.values(), opened, clock, written))
                continue
            for ch, by_bucket in result.moved.items():
                box.put(exchange.channel_stream(ch), by_bucket)
            views += [row for name, z in result.outputs.items() for row in pieces(tags[name], b, z)]
            seen = [*changes.values(), *inputs.values()]
            facts.append(_facts(stage, b, seen, opened, clock, written, result.outputs))
        box.flush()  # once every bucket stepped: a failed task sends nothing
        if views:
            files.write_parquet(out / VIEWS / f"s{stage}-s{slot}.parquet", pa.Table.from_batches([blobs(views)]))
        if facts:
            files.write_json(out / FACTS / f"s{stage}-s{slot}.json", facts)

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

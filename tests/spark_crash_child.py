"""The job the crash tests kill: four kinds of source, four views, a fixed batch stream.

    python tests/spark_crash_child.py WORKDIR [--batches N] [--seed S] [--spark PREFIX]

WORKDIR/sources holds the source tables as parquet directories, WORKDIR/checkpoint the
checkpoint and WORKDIR/output the view tables. Batch i of every source is a pure
function of (seed, i), so a restarted child rewrites exactly what the killed one was
writing. Sources are written batch by batch, the `orders` change file last: it marks a
batch complete. On start the child deletes the files of an incomplete batch (no refresh
can have read them: a refresh only runs after a complete batch), rewrites the last
complete batch (same content), refreshes, and goes on with the next batch. Each refresh
thus reads exactly one batch, as in an uninterrupted run, and the change logs, not just
the final contents, can be compared refresh by refresh.

Without --spark the job reads the sources with `FileEngine` (pyarrow + polars), so a
killed child costs a second, not a Spark session: the checkpoint and sink code under
test is the same. With --spark it runs a local SparkSession and SparkPipeline over
temporary views named PREFIX_<table>.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from dbspc.runtime.refresh import failpoints, files
from dbspc.runtime.refresh.job import Job
from dbspc.runtime.refresh.sources import HASH, AppendTable, ChangeTable, PlainTable, Source, hash_sum
from dbspc.runtime.zset import WEIGHT, col_name

VIEWS = [
    """CREATE VIEW revenue AS
       SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total
       FROM orders o JOIN customers c ON o.cust = c.id GROUP BY c.region""",
    "CREATE VIEW big_orders AS SELECT id, cust, amount FROM orders WHERE amount > 50",
    "CREATE VIEW event_vals AS SELECT val, COUNT(*) AS n, COUNT(DISTINCT k) AS keys FROM events GROUP BY val",
    """CREATE VIEW reach AS WITH RECURSIVE r(x, y) AS (
         SELECT src, dst FROM edges UNION SELECT e.src, r.y FROM edges e JOIN r ON e.dst = r.x)
       SELECT x, y FROM r""",
]
TABLES = ("orders", "customers", "events", "edges")


def sources(prefix: str = "") -> list[Source]:
    p = f"{prefix}_" if prefix else ""
    return [
        ChangeTable("orders", offset="batch", weight="weight", source=f"{p}orders_cdc"),
        AppendTable("customers", offset="batch", source=f"{p}customers"),
        ChangeTable("events", offset="version", op="op", source=f"{p}events_cdc"),
        PlainTable("edges", source=f"{p}edges"),
    ]


# -- the batch stream ----------------------------------------------------------------


def batches(n: int, seed: int) -> list[dict[str, pa.Table]]:
    """Batch i of each source, for i < n: inserts and deletes of rows that are there."""
    rng = np.random.default_rng(seed)
    orders: dict[int, tuple[int, Decimal]] = {}
    events: dict[int, str] = {}
    next_id = 0
    out = []
    for i in range(n):
        # orders: weights +1 inserts, -1 deletes of live orders, some updates (-1/+1).
        rows: list[tuple[int, int, Decimal, int]] = []
        live = sorted(orders)
        for oid in rng.choice(live, size=min(len(live), 6), replace=False) if live else []:
            cust, amount = orders.pop(int(oid))
            rows.append((int(oid), cust, amount, -1))
            if rng.random() < 0.5:  # an update: re-insert with a new amount
                orders[int(oid)] = (cust, Decimal(int(rng.integers(1, 10000))) / 100)
                rows.append((int(oid), *orders[int(oid)], 1))
        for _ in range(12):
            orders[next_id] = (int(rng.integers(0, 8)), Decimal(int(rng.integers(1, 10000))) / 100)
            rows.append((next_id, *orders[next_id], 1))
            next_id += 1
        order_table = pa.table(
            {
                "id": pa.array([r[0] for r in rows], pa.int64()),
                "cust": pa.array([r[1] for r in rows], pa.int32()),
                "amount": pa.array([r[2] for r in rows], pa.decimal128(10, 2)),
                "weight": pa.array([r[3] for r in rows], pa.int32()),
                "batch": pa.array([i] * len(rows), pa.int64()),
            }
        )
        customers = pa.table(
            {
                "id": pa.array([i], pa.int32()),
                "region": pa.array([["north", "south", "east"][i % 3]]),
                "batch": pa.array([i], pa.int32()),
            }
        )
        ev: list[tuple[int, str | None, str]] = []
        for k in sorted(rng.choice(40, size=6, replace=False)):
            key = int(k)
            new = None if rng.random() < 0.2 else f"v{int(rng.integers(0, 5))}"
            if key in events:
                ev.append((key, events.pop(key), "update_preimage" if new else "delete"))
                if new:
                    ev.append((key, new, "update_postimage"))
                    events[key] = new
            elif new:
                ev.append((key, new, "INSERT"))
                events[key] = new
        event_table = pa.table(
            {
                "k": pa.array([e[0] for e in ev], pa.int32()),
                "val": pa.array([e[1] for e in ev], pa.string()),
                "op": pa.array([e[2] for e in ev], pa.string()),
                "version": pa.array([100 + i] * len(ev), pa.int64()),
            }
        )
        m = 14
        src = rng.integers(0, m, size=m + i % 4)
        dst = rng.integers(0, m, size=m + i % 4)
        edges = pa.table({"src": pa.array(src, pa.int32()), "dst": pa.array(dst, pa.int32())})
        out.append({"orders_cdc": order_table, "customers": customers, "events_cdc": event_table, "edges": edges})
    return out


def _batch_file(table_dir: Path, i: int) -> Path:
    return table_dir / f"b{i:05d}.parquet"


def write_source(path: Path, table: pa.Table) -> None:
    """Atomically, like a writer committing a batch (and past no failpoint: the kills
    are aimed at the job, not at this test's writer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def write_batch(source_dir: Path, i: int, batch: dict[str, pa.Table]) -> None:
    """Write batch i, idempotently; `orders_cdc` last (it marks the batch complete)."""
    for name in ("edges", "customers", "events_cdc", "orders_cdc"):
        target = source_dir / name / ("current.parquet" if name == "edges" else f"b{i:05d}.parquet")
        write_source(target, batch[name])


def complete_batches(source_dir: Path) -> int:
    """How many batches are completely written."""
    done = 0
    while _batch_file(source_dir / "orders_cdc", done).exists():
        done += 1
    return done


def drop_incomplete(source_dir: Path, complete: int) -> None:
    for name in ("customers", "events_cdc", "orders_cdc"):
        d = source_dir / name
        for path in d.glob("*.parquet") if d.is_dir() else ():
            if int(path.stem[1:]) >= complete:
                path.unlink()


def run(job: Any, source_dir: Path, n: int, seed: int) -> None:
    """Bring the job to batch n: finish the last complete batch, then the rest."""
    stream = batches(n, seed)
    done = complete_batches(source_dir)
    drop_incomplete(source_dir, done)
    first = max(done - 1, 0)
    for i in range(first, n):
        write_batch(source_dir, i, stream[i])
        job.refresh()


# -- a file-based engine ---------------------------------------------------------------


class FileEngine:
    """Sources as parquet directories, read with pyarrow and diffed with polars: the
    Engine protocol without Spark (see runtime/refresh/engine.py)."""

    def __init__(self, source_dir: Path) -> None:
        self.source_dir = source_dir

    def _dataset(self, source: str) -> ds.Dataset:
        return ds.dataset(self.source_dir / source, format="parquet")

    def schema(self, source: str, table: str) -> pa.Schema:
        return self._dataset(source).schema

    def read_after(
        self,
        source: str,
        select: Sequence[tuple[str, str]],
        offset: str,
        after: int | None,
        within: Sequence[str] | None = None,
    ) -> pa.Table:
        dataset = ds.dataset(list(within), format="parquet") if within else self._dataset(source)
        flt = None if after is None else (pc.field(offset) > after) | pc.field(offset).is_null()
        table = dataset.to_table(columns=[s for s, _ in select], filter=flt)
        hashed = table.append_column(HASH, _hashes(table))
        return hashed.rename_columns([*[d for _, d in select], HASH])

    def summary(
        self, source: str, columns: Sequence[str], offset: str, upto: int, after: int | None = None
    ) -> tuple[int, int]:
        where = pc.field(offset) <= upto
        if after is not None:
            where = where & (pc.field(offset) > after)
        table = self._dataset(source).to_table(columns=list(columns), filter=where)
        return table.num_rows, hash_sum(pa.table({HASH: _hashes(table)}))

    def files(self, source: str) -> list[str] | None:
        return sorted(self._dataset(source).files) or None

    def count_upto(self, source: str, files: Sequence[str], offset: str, upto: int) -> int | None:
        added = ds.dataset(list(files), format="parquet")
        return added.to_table(columns=[offset], filter=pc.field(offset) <= upto).num_rows

    def oldest_offset(self, source: str, offset: str, upto: int) -> int | None:
        table = self._dataset(source).to_table(columns=[offset], filter=pc.field(offset) <= upto)
        value = pc.min(table.column(offset)).as_py() if table.num_rows else None
        return None if value is None else int(value)

    def sample(self, source: str, select: Sequence[tuple[str, str]], offset: str, upto: int) -> pa.Table:
        table = self._dataset(source).to_table(columns=[s for s, _ in select], filter=pc.field(offset) <= upto)
        return table.sort_by([(offset, "descending")]).slice(0, 1).rename_columns([d for _, d in select])

    def snapshot_diff(self, source: str, columns: Sequence[str], new: Path, old: Path | None) -> pa.Table:
        table = self._dataset(source).to_table(columns=list(columns))
        table = table.rename_columns([col_name(i) for i in range(len(columns))])
        files.write_parquet(new / "part-0.parquet", table)
        now = pl.from_arrow(table)
        assert isinstance(now, pl.DataFrame)
        now = now.with_columns(pl.lit(1, pl.Int64()).alias(WEIGHT))
        if old is not None:
            before = pl.read_parquet(old / "part-0.parquet").with_columns(pl.lit(-1, pl.Int64()).alias(WEIGHT))
            keys = [col_name(i) for i in range(len(columns))]
            now = pl.concat([now, before]).group_by(keys).agg(pl.col(WEIGHT).sum()).filter(pl.col(WEIGHT) != 0)
        return now.to_arrow()


def _hashes(table: pa.Table) -> pa.Array:
    """Row hashes, stable within one polars version (the checks only compare hashes
    computed by the same engine)."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.hash_rows(seed=0).reinterpret(signed=True).to_arrow()


def file_job(workdir: Path) -> Job:
    return Job(
        FileEngine(workdir / "sources"),
        workdir / "checkpoint",
        workdir / "output",
        sources(),
        VIEWS,
        change_log=True,
    )


def spark_job(workdir: Path, spark: Any, prefix: str) -> Any:
    """The same job in Spark, over temporary views PREFIX_<source> of the parquet dirs."""
    from dbspc.runtime.spark import SparkPipeline

    for spec in sources(prefix):
        name = spec.source or spec.table
        path = workdir / "sources" / name.removeprefix(f"{prefix}_")
        path.mkdir(parents=True, exist_ok=True)
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} USING parquet OPTIONS (path '{path}')")
    return SparkPipeline(
        spark,
        workdir / "checkpoint",
        output=workdir / "output",
        sources=sources(prefix),
        views=VIEWS,
        change_log=True,
        publish=False,
    )


def prepare_sources(workdir: Path, seed: int) -> None:
    """A job reads its sources' schemas when it starts: write batch 0 before that."""
    if complete_batches(workdir / "sources") == 0:
        write_batch(workdir / "sources", 0, batches(1, seed)[0])


# -- what the tests compare ------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    failpoints: int  # how many failpoints the uninterrupted run passes
    outputs: dict[str, Any]


def uninterrupted(workdir: Path, batches: int, seed: int) -> Reference:
    """Run the job in this process without crashes: the outputs to expect, and how many
    failpoints a run passes (the range kills are drawn from)."""
    before = failpoints.passed()
    prepare_sources(workdir, seed)
    job = file_job(workdir)
    run(job, workdir / "sources", batches, seed)
    job.close()
    return Reference(failpoints.passed() - before, outputs(workdir))


def _rows(frame: pl.DataFrame) -> list[tuple[Any, ...]]:
    return frame.sort(frame.columns, nulls_last=False).rows()


def outputs(workdir: Path) -> dict[str, Any]:
    """What a reader sees, read straight from the files _published.json names: each
    view's table (its version directory, read as plain parquet) and its change log up
    to the committed refresh, checking on the way that the log sums to the contents."""
    root = workdir / "output"
    record = json.loads((root / "_published.json").read_text())
    committed = int(record["refresh_id"])
    out: dict[str, Any] = {"refresh_id": committed}
    for view, entry in sorted(record["views"].items()):
        keys = list(entry["columns"])
        table = pl.read_parquet(root / entry["version"] / "*.parquet")
        contents = table.group_by(keys).agg(pl.len().cast(pl.Int64).alias(WEIGHT))
        log = pl.concat([pl.read_parquet(p) for p in sorted((root / entry["changes"]).glob("r*.parquet"))])
        assert log.get_column("_commit_version").max() <= committed  # type: ignore[operator]
        signed = pl.when(pl.col("_change_type") == "insert").then(1).otherwise(-1).cast(pl.Int64)
        integral = log.group_by(keys).agg(signed.sum().alias(WEIGHT)).filter(pl.col(WEIGHT) != 0)
        assert _rows(integral) == _rows(contents), f"view {view}: the change log does not add up to the contents"
        log = log.drop("_commit_timestamp")
        out[view] = {"contents": _rows(contents), "log": _rows(log)}
    return out


def assert_clean(workdir: Path) -> None:
    """No temporary files, no unreferenced state or snapshots, no uncommitted log files."""
    manifest = json.loads((workdir / "checkpoint" / "MANIFEST.json").read_text())
    named = {p for parts in manifest["state"].values() for p in parts}
    assert {f"state/{p.name}" for p in (workdir / "checkpoint" / "state").iterdir()} == named
    snapshots = {str(p.relative_to(workdir / "checkpoint")) for p in (workdir / "checkpoint" / "snapshots").glob("*/*")}
    assert snapshots == set(manifest["snapshots"].values())
    assert [p for p in workdir.rglob(".*tmp-*") if "sources" not in p.parts] == []
    for log in (workdir / "output").glob("*/changes/*r*.parquet"):
        assert int(log.stem.lstrip("_")[1:]) <= manifest["refresh_id"]
        assert not log.name.startswith("_"), f"{log} was committed but not promoted"
    for version in (workdir / "output").glob("*/v*"):
        named = {
            e["version"] for e in json.loads((workdir / "output" / "_published.json").read_text())["views"].values()
        }
        retired = {s.get("retired") for s in manifest["sinks"].values()}
        assert str(version.relative_to(workdir / "output")) in named | retired, f"{version} is not named"


def spawn(workdir: Path, batches: int, seed: int, crash_after: int | None = None, spark: str | None = None) -> Any:
    """This module as a child process, optionally set to die at failpoint `crash_after`."""
    env = {k: v for k, v in os.environ.items() if k != failpoints.ENV}
    if crash_after is not None:
        env[failpoints.ENV] = str(crash_after)
    cmd = [sys.executable, __file__, str(workdir), "--batches", str(batches), "--seed", str(seed)]
    if spark:
        cmd += ["--spark", spark]
    return subprocess.Popen(
        cmd,
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spark", metavar="PREFIX")
    args = parser.parse_args(argv)
    source_dir: Path = args.workdir / "sources"
    prepare_sources(args.workdir, args.seed)
    if args.spark:
        from dbspc.runtime.spark import local_session

        spark = local_session(app="dbspc-crash-child")
        job = spark_job(args.workdir, spark, args.spark)
        job.start()
        print("ready", flush=True)
    else:
        job = file_job(args.workdir)
    run(job, source_dir, args.batches, args.seed)
    print(json.dumps({"failpoints": failpoints.passed(), "pid": os.getpid()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

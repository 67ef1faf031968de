"""View outputs as real tables: plain parquet, one immutable version per refresh.

A view's table must be right when read as plain files by any engine, so its files hold
the view's rows under the view's own column names, with no weights: a row that occurs
twice is written twice. Each refresh that changes a view publishes a new *version* of
it, a directory holding the whole table:

    <output>/<view>/v<k>/part-<b>.parquet   the rows of bucket b at refresh k
    <output>/<view>/changes/r<k>.parquet    refresh k's changes, as a change data feed

Rows are spread over 2^n buckets by a hash of the whole row. A refresh rewrites only
the buckets its delta touches (old rows + delta, consolidated, expanded by weight) and
links (local disks) or copies (other file systems) the other buckets' files into the new
version, so its cost follows the buckets touched, not the view. The bucket count grows
with the view (about BUCKET_ROWS rows a bucket), re-bucketing the table when it has grown
fourfold.

Versions are switched, never changed: the manifest names each view's current version,
and readers follow it through the catalog table's LOCATION or `_published.json`, which
move only after the commit, so a reader sees a refresh entirely or not at all. The
previous version is kept one refresh longer, for queries still reading it.

The change log is a directory of one file per refresh, with the view's columns plus
`_change_type` ('insert' / 'delete'), `_commit_version` (the refresh id) and
`_commit_timestamp`, like Delta's change data feed. A refresh stages its file under a
hidden name (`_r<k>`, which readers skip) and renames it into place after the commit.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.types import SqlType
from dbspc.runtime.refresh import storage as store
from dbspc.runtime.refresh.failpoints import failpoint
from dbspc.runtime.refresh.schema import arrow_type
from dbspc.runtime.refresh.sources import naive_utc
from dbspc.runtime.refresh.storage import Storage
from dbspc.runtime.zset import ROW_HASH_SEED, WEIGHT, ZSet, col_name

PUBLISHED = "_published.json"  # <output>/_published.json: what readers follow
BUCKET_ROWS = 1 << 16
MAX_BUCKETS = 1 << 12
# The bucket of a row must be computed the same way as when its file was written.
HASH_SCHEME = f"polars-{pl.__version__}-hash_rows-{ROW_HASH_SEED}"

_WRITERS = 4
CHANGE_TYPE = "_change_type"
COMMIT_VERSION = "_commit_version"
COMMIT_TIMESTAMP = "_commit_timestamp"


@dataclass(frozen=True)
class ViewVersion:
    """A view's committed table: version directory, buckets and the files they have."""

    version: str | None = None  # "<view>/v<k>", None before the first write
    buckets: int = 1
    scheme: str = HASH_SCHEME
    parts: tuple[int, ...] = ()
    rows: int = 0
    retired: str | None = None  # the previous version, deleted after the next commit

    def part(self, bucket: int) -> str:
        assert self.version is not None
        return f"{self.version}/part-{bucket:05d}.parquet"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "buckets": self.buckets,
            "scheme": self.scheme,
            "parts": list(self.parts),
            "rows": self.rows,
            "retired": self.retired,
        }

    @staticmethod
    def from_json(value: Mapping[str, Any] | None) -> ViewVersion:
        if not value or "version" not in value:
            return ViewVersion()
        return ViewVersion(
            value["version"],
            int(value["buckets"]),
            str(value["scheme"]),
            tuple(int(b) for b in value["parts"]),
            int(value["rows"]),
            value.get("retired"),
        )


def table_schema(names: Sequence[str], types: Sequence[SqlType]) -> pa.Schema:
    return pa.schema([pa.field(n, arrow_type(t)) for n, t in zip(names, types, strict=True)])


def change_schema(names: Sequence[str], types: Sequence[SqlType]) -> pa.Schema:
    extra = [
        pa.field(CHANGE_TYPE, pa.large_string()),
        pa.field(COMMIT_VERSION, pa.int64()),
        pa.field(COMMIT_TIMESTAMP, pa.timestamp("us", tz="UTC")),
    ]
    return pa.schema([*table_schema(names, types), *extra])


class Sinks:
    """Writes the table versions and change logs of every view of one job."""

    def __init__(
        self,
        storage: Storage,
        views: Mapping[str, tuple[tuple[str, ...], tuple[SqlType, ...]]],
        change_log: Sequence[str],
        bucket_rows: int = BUCKET_ROWS,
    ) -> None:
        self.storage = storage
        self.views = dict(views)  # view -> (column names, types)
        self.change_log = set(change_log)
        self.bucket_rows = bucket_rows

    def types(self, view: str) -> tuple[SqlType, ...]:
        return self.views[view][1]

    def write(
        self, refresh_id: int, deltas: Mapping[str, ZSet], committed: Mapping[str, Any], stamp: float | None = None
    ) -> dict[str, Any]:
        """Write refresh `refresh_id`'s versions and staged change logs; returns the
        manifest's sinks section. Idempotent: a redo after a crash rewrites the same names."""
        stamp = time.time() if stamp is None else stamp
        section: dict[str, Any] = {}
        for view in self.views:
            before = ViewVersion.from_json(committed.get(view))
            delta = deltas[view].consolidate() if view in deltas else ZSet.empty(self.types(view))
            if len(delta) == 0 and before.version is not None:
                section[view] = replace(before, retired=None).to_json()  # the retired one goes now
                continue
            section[view] = self._new_version(view, refresh_id, before, delta).to_json()
            if view in self.change_log and before.version is None:
                self.storage.mkdirs(f"{view}/changes")  # readers find an empty log
            if view in self.change_log and len(delta):
                self.stage_changes(view, refresh_id, delta.frame, stamp)
        for view, entry in section.items():
            entry["schema"] = self.schema(view)
        return section

    def schema(self, view: str) -> list[list[str]]:
        """The view's columns as [name, type] pairs, as the manifest keeps them: a new
        program whose view has other columns gets a new table (evolve.py)."""
        names, types = self.views[view]
        return [[n, t.sql()] for n, t in zip(names, types, strict=True)]

    # -- versions ------------------------------------------------------------------------

    def _new_version(self, view: str, k: int, before: ViewVersion, delta: ZSet) -> ViewVersion:
        rows = before.rows + int(delta.frame.get_column(WEIGHT).sum()) if len(delta) else before.rows
        out, rebucket = self.start_version(view, k, before, rows)
        if rebucket:
            old = self._read_all(view, before)
            touched = dict(enumerate(bucket_split(ZSet.concat([old, delta], self.types(view)).frame, out.buckets)))
        else:
            touched = {b: f for b, f in enumerate(bucket_split(delta.frame, out.buckets)) if f.height}
        # Parquet decoding and encoding release the GIL: buckets are rewritten side by side.
        with ThreadPoolExecutor(max_workers=_WRITERS) as pool:
            done = pool.map(lambda b: self.rewrite_bucket(view, out, before, b, touched[b], rebucket), touched)
            written = dict(zip(touched, done, strict=True))
        return self.finish_version(view, out, before, written, rebucket, rows)

    def start_version(self, view: str, k: int, before: ViewVersion, rows: int) -> tuple[ViewVersion, bool]:
        """Refresh k's version of the view (`plan_version`), empty."""
        self.clear_version(view, k)
        return self.plan_version(view, k, before, rows)

    def plan_version(self, view: str, k: int, before: ViewVersion, rows: int) -> tuple[ViewVersion, bool]:
        """Refresh k's version of the view (of `rows` rows), and whether it is bucketed
        anew (every old row rewritten) rather than by `before`'s buckets: a decision
        only, the same wherever it is taken (the distributed write takes it in tasks)."""
        buckets = before.buckets
        rebucket = before.version is None or before.scheme != HASH_SCHEME or rows > 4 * buckets * self.bucket_rows
        if rebucket:
            buckets = _bucket_count(rows, self.bucket_rows)
        return ViewVersion(_version_dir(view, k), buckets), rebucket

    def clear_version(self, view: str, k: int) -> None:
        """Remove what a crashed attempt wrote of refresh k's version of the view."""
        self.storage.remove(_version_dir(view, k))

    def rewrite_bucket(
        self, view: str, out: ViewVersion, before: ViewVersion, bucket: int, frame: pl.DataFrame, rebucket: bool
    ) -> bool:
        """Bucket `bucket` of version `out`: its old rows (unless `frame` holds them, when
        rebucketing) plus `frame`'s; False if it is empty."""
        names, types = self.views[view]
        if not rebucket and bucket in before.parts:
            frame = pl.concat([self._read_part(view, before.part(bucket)).frame, frame])
        contents = _expand(ZSet(frame, types).consolidate().frame, view)
        if contents.height:
            store.write_parquet(self.storage, out.part(bucket), to_table(contents, names, table_schema(names, types)))
        return bool(contents.height)

    def finish_version(
        self, view: str, out: ViewVersion, before: ViewVersion, written: Mapping[int, bool], rebucket: bool, rows: int
    ) -> ViewVersion:
        """Version `out` once its `written` buckets are (True: not empty): the buckets
        no change reached linked from `before`, and a file even if the table is empty."""
        names, types = self.views[view]
        parts = set() if rebucket else set(before.parts)
        parts |= {b for b, nonempty in written.items() if nonempty}
        parts -= {b for b, nonempty in written.items() if not nonempty}
        if not rebucket:
            for b in sorted(set(before.parts) - set(written)):
                self.storage.copy(before.part(b), out.part(b))
        if not parts:  # an empty table still has a file, so that readers find its schema
            store.write_parquet(self.storage, out.part(0), table_schema(names, types).empty_table())
            parts.add(0)
        failpoint(f"version {out.version}")
        return ViewVersion(out.version, out.buckets, HASH_SCHEME, tuple(sorted(parts)), rows, before.version)

    def _read_part(self, view: str, rel: str) -> ZSet:
        """A bucket file read back as a Z-set of weight-1 rows (positional columns)."""
        return self.as_rows(view, store.read_parquet(self.storage, rel))

    def as_rows(self, view: str, table: pa.Table) -> ZSet:
        """Rows of the view's table (as its files hold them) as weight-1 Z-set rows."""
        types = self.types(view)
        table = table.rename_columns([col_name(i) for i in range(table.num_columns)])
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        frame = naive_utc(frame, types).with_columns(pl.lit(1, dtype=pl.Int64()).alias(WEIGHT))
        return ZSet.from_frame(frame, types)

    def _read_all(self, view: str, version: ViewVersion) -> ZSet:
        types = self.types(view)
        if version.version is None:
            return ZSet.empty(types)
        return ZSet.concat([self._read_part(view, version.part(b)) for b in version.parts], types)

    def contents(self, view: str, section: Mapping[str, Any] | None) -> ZSet:
        """A view's committed contents read back (evolution, tests and tools)."""
        return self._read_all(view, ViewVersion.from_json(section)).consolidate()

    # -- change logs ---------------------------------------------------------------------

    def stage_changes(self, view: str, k: int, frame: pl.DataFrame, stamp: float, piece: int | None = None) -> None:
        """Refresh k's changes of the view, staged until its commit; a distributed write
        stages one `piece` per task."""
        names, types = self.views[view]
        weights = frame.get_column(WEIGHT).to_numpy()
        rows = np.repeat(np.arange(len(weights)), np.abs(weights))
        logged = frame.drop(WEIGHT)[rows].with_columns(
            pl.Series(CHANGE_TYPE, np.where(weights[rows] > 0, "insert", "delete"), dtype=pl.String),
            pl.lit(k, dtype=pl.Int64()).alias(COMMIT_VERSION),
            pl.lit(int(stamp * 1_000_000), dtype=pl.Int64()).cast(pl.Datetime("us")).alias(COMMIT_TIMESTAMP),
        )
        store.write_parquet(
            self.storage, staged_change_file(view, k, piece), to_table(logged, names, change_schema(names, types))
        )

    def promote_changes(self, refresh_id: int) -> None:
        """After the commit of `refresh_id`: move its staged change files into the logs;
        files staged by refreshes that never committed are deleted."""
        for view in self.change_log:
            for name in self.storage.listdir(f"{view}/changes"):
                k = _refresh_of(name)
                if k < 0:
                    continue
                rel = f"{view}/changes/{name}"
                if name.startswith("_"):
                    if k <= refresh_id:
                        self.storage.rename(rel, f"{view}/changes/{name[1:]}")
                    else:
                        self.storage.remove(rel)
                elif k > refresh_id:
                    self.storage.remove(rel)

    # -- garbage ---------------------------------------------------------------------------

    def collect_garbage(self, section: Mapping[str, Any] | None) -> None:
        """Delete every version directory the manifest names neither as current nor as
        retired: superseded ones, and those of refreshes that never committed."""
        for view in self.views:
            current = ViewVersion.from_json((section or {}).get(view))
            keep = {current.version, current.retired}
            for name in self.storage.listdir(view):
                if name.startswith("v") and f"{view}/{name}" not in keep:
                    self.storage.remove(f"{view}/{name}")
                elif name.startswith("."):
                    self.storage.remove(f"{view}/{name}")
            for name in self.storage.listdir(f"{view}/changes"):
                if name.startswith("."):  # a write a crash interrupted
                    self.storage.remove(f"{view}/changes/{name}")


def published(refresh_id: int, views: Mapping[str, Any]) -> dict[str, Any]:
    """The record readers follow (runtime/spark/readers.py): the committed refresh and,
    per view, its columns, types, current version and change log."""
    return {"refresh_id": refresh_id, "views": dict(views)}


def publish(storage: Storage, record: Mapping[str, Any]) -> None:
    storage.write_bytes(PUBLISHED, json.dumps(record, indent=1, sort_keys=True).encode())


def change_file(view: str, refresh_id: int) -> str:
    return f"{view}/changes/r{refresh_id:08d}.parquet"


def staged_change_file(view: str, refresh_id: int, piece: int | None = None) -> str:
    suffix = "" if piece is None else f"-{piece:05d}"
    return f"{view}/changes/_r{refresh_id:08d}{suffix}.parquet"


_CHANGE_FILE = re.compile(r"^_?r(\d+)(?:-\d+)?\.parquet$")


def _refresh_of(name: str) -> int:
    """The refresh of a change file (`r<k>.parquet`, or piece `r<k>-<b>.parquet`), or -1."""
    m = _CHANGE_FILE.match(name)
    return int(m.group(1)) if m else -1


def _version_dir(view: str, k: int) -> str:
    return f"{view}/v{k:08d}"


def _bucket_count(rows: int, bucket_rows: int) -> int:
    buckets = 1
    while buckets < MAX_BUCKETS and buckets * bucket_rows < rows:
        buckets *= 2
    return buckets


def bucket_split(frame: pl.DataFrame, buckets: int) -> list[pl.DataFrame]:
    """The rows of a Z-set frame per bucket (a hash of the row, weight excluded)."""
    if buckets == 1 or frame.height == 0:
        return [frame] + [frame.clear() for _ in range(buckets - 1)]
    hashes = frame.drop(WEIGHT).hash_rows(seed=ROW_HASH_SEED).to_numpy()
    bucket = (hashes & np.uint64(buckets - 1)).astype(np.int64)
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
    return [frame[order[bounds[b] : bounds[b + 1]]] for b in range(buckets)]


def _expand(frame: pl.DataFrame, view: str) -> pl.DataFrame:
    """A consolidated Z-set frame as a bag: each row repeated by its weight."""
    weights = frame.get_column(WEIGHT).to_numpy()
    if (weights < 0).any():
        raise RuntimeError(f"view '{view}': its published table lost rows it now deletes (a corrupted output)")
    if (weights == 1).all():
        return frame.drop(WEIGHT)
    return frame.drop(WEIGHT)[np.repeat(np.arange(len(weights)), weights)]


def to_table(frame: pl.DataFrame, names: Sequence[str], schema: pa.Schema) -> pa.Table:
    """Positional columns c0.. (plus any named extras) as the table's Arrow schema."""
    columns = frame.columns
    renamed = [names[i] if i < len(names) else c for i, c in enumerate(columns)]
    return frame.to_arrow().rename_columns(renamed).cast(schema)

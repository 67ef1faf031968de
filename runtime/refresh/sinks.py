"""View outputs as parquet files Spark reads: merge-on-read runs plus a change log.

Rewriting a view's whole table on every refresh would cost O(|view|) per refresh
however small the change. Instead each view is a short list of parquet *runs*, each
holding rows with weights (c0.., w), whose sum is the view's contents:

    <output>/<view>/runs/r<lo>-<hi>.parquet    the consolidated sum of the output deltas
                                               of refreshes lo..hi (r0 is a base)
    <output>/<view>/changes/r<k>.parquet       refresh k's delta: c0.., w, refresh_id

A refresh writes its delta as a new run, then merges the newest runs while the older
of the last two is at most `merge_factor` times larger (as the in-memory trace spine
does). A run size thus grows geometrically with its age: O(log) runs per view, and
each output row is rewritten O(log) times in all, so write-back costs O(delta · log)
amortized, never the whole view. A reader's DataFrame sums the runs' weights by row
(one aggregation, skipped when there is a single run) and repeats each row by its
weight (bags).

Runs are immutable and named by the refreshes they cover. The list of current runs
lives in the checkpoint manifest, so a reader sees a refresh entirely or not at all:
files of a refresh that did not commit are never named by a manifest and are deleted
on restart. Runs superseded by a merge are kept one refresh longer ("retired"), so a
query already reading the previous list can finish.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from compiler.types import SqlType
from runtime.refresh import files
from runtime.refresh.failpoints import failpoint
from runtime.refresh.schema import arrow_type
from runtime.zset import WEIGHT, ZSet, col_name

REFRESH_ID = "refresh_id"
PUBLISHED = "_published.json"  # <output>/_published.json: what readers follow
MERGE_FACTOR = 4


@dataclass(frozen=True, slots=True)
class Run:
    """One parquet file of a view: the summed deltas of refreshes lo..hi."""

    file: str  # relative to the output root
    lo: int
    hi: int
    rows: int

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "lo": self.lo, "hi": self.hi, "rows": self.rows}

    @staticmethod
    def from_json(value: Mapping[str, Any]) -> Run:
        return Run(str(value["file"]), int(value["lo"]), int(value["hi"]), int(value["rows"]))


@dataclass(frozen=True)
class ViewFiles:
    """A view's committed files: its current runs, and the runs retired this refresh."""

    runs: tuple[Run, ...] = ()
    retired: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"runs": [r.to_json() for r in self.runs], "retired": list(self.retired)}

    @staticmethod
    def from_json(value: Mapping[str, Any] | None) -> ViewFiles:
        if not value:
            return ViewFiles()
        return ViewFiles(tuple(Run.from_json(r) for r in value["runs"]), tuple(value["retired"]))


def arrow_schema(types: Sequence[SqlType], extra: Sequence[tuple[str, pa.DataType]] = ()) -> pa.Schema:
    fields = [pa.field(col_name(i), arrow_type(t)) for i, t in enumerate(types)]
    fields.append(pa.field(WEIGHT, pa.int64()))
    fields.extend(pa.field(n, t) for n, t in extra)
    return pa.schema(fields)


def to_arrow(frame: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """The frame with the sink's Arrow types (naive UTC timestamps become UTC-adjusted)."""
    return frame.select(schema.names).to_arrow().cast(schema)


class Sinks:
    """Writes the output files of every view of one job under `root`."""

    def __init__(
        self,
        root: Path,
        views: Mapping[str, tuple[SqlType, ...]],
        change_log: Sequence[str],
        merge_factor: int = MERGE_FACTOR,
    ) -> None:
        self.root = root
        self.views = dict(views)
        self.change_log = set(change_log)
        self.merge_factor = merge_factor

    def view_dir(self, view: str) -> Path:
        return self.root / view

    def write(self, refresh_id: int, deltas: Mapping[str, ZSet], committed: Mapping[str, Any]) -> dict[str, Any]:
        """Write refresh `refresh_id`'s files; returns the manifest's sinks section.

        Idempotent: a redo of the same refresh id after a crash rewrites the same names."""
        section: dict[str, Any] = {}
        for view, types in self.views.items():
            before = ViewFiles.from_json(committed.get(view))
            delta = deltas[view].consolidate()
            runs = list(before.runs)
            if len(delta):
                runs = self._add_run(view, types, runs, refresh_id, delta.frame)
                if view in self.change_log:
                    self._write_changes(view, types, refresh_id, delta.frame)
            current = {r.file for r in runs}
            retired = tuple(r.file for r in before.runs if r.file not in current)
            section[view] = ViewFiles(tuple(runs), retired).to_json()
        return section

    def _add_run(
        self, view: str, types: tuple[SqlType, ...], runs: list[Run], k: int, frame: pl.DataFrame
    ) -> list[Run]:
        schema = arrow_schema(types)
        newest = self._write_run(view, schema, k, k, frame)
        runs.append(newest)
        cached: dict[str, pl.DataFrame] = {newest.file: frame}

        def load(run: Run) -> pl.DataFrame:
            if run.file in cached:
                return cached[run.file]
            return _positional(pl.read_parquet(self.root / run.file), types)

        while len(runs) >= 2 and runs[-2].rows <= self.merge_factor * runs[-1].rows:
            newer, older = runs.pop(), runs.pop()
            merged = ZSet(pl.concat([load(older), load(newer)]), types).consolidate()
            if len(merged):
                run = self._write_run(view, schema, older.lo, newer.hi, merged.frame)
                cached[run.file] = merged.frame
                runs.append(run)
        return runs

    def _write_run(self, view: str, schema: pa.Schema, lo: int, hi: int, frame: pl.DataFrame) -> Run:
        rel = f"{view}/runs/r{lo:08d}-{hi:08d}.parquet"
        files.write_parquet(self.root / rel, to_arrow(frame, schema))
        failpoint(f"run {rel}")
        return Run(rel, lo, hi, frame.height)

    def _write_changes(self, view: str, types: tuple[SqlType, ...], k: int, frame: pl.DataFrame) -> None:
        schema = arrow_schema(types, [(REFRESH_ID, pa.int64())])
        logged = frame.with_columns(pl.lit(k, dtype=pl.Int64()).alias(REFRESH_ID))
        files.write_parquet(self.root / change_file(view, k), to_arrow(logged, schema))

    def contents(self, view: str, state: Mapping[str, Any] | None) -> ZSet:
        """A view's committed contents read with polars (tests and tools; Spark readers
        use readers.contents)."""
        types = self.views[view]
        runs = ViewFiles.from_json(state).runs
        frames = [_positional(pl.read_parquet(self.root / r.file), types) for r in runs]
        if not frames:
            return ZSet.empty(types)
        return ZSet(pl.concat(frames), types).consolidate()

    def collect_garbage(self, sinks: Mapping[str, Any] | None, refresh_id: int) -> None:
        """Delete run files no manifest names (current or retired) and change-log files
        of refreshes after `refresh_id` (written by a refresh that never committed)."""
        for view in self.views:
            state = ViewFiles.from_json((sinks or {}).get(view))
            keep = {r.file for r in state.runs} | set(state.retired)
            runs_dir = self.view_dir(view) / "runs"
            if runs_dir.is_dir():
                for path in runs_dir.iterdir():
                    if f"{view}/runs/{path.name}" not in keep:
                        files.remove(path)
            changes_dir = self.view_dir(view) / "changes"
            if changes_dir.is_dir():
                for path in changes_dir.iterdir():
                    if files.is_temporary(path) or _refresh_of(path) > refresh_id:
                        files.remove(path)


def published(refresh_id: int, views: Mapping[str, Any]) -> dict[str, Any]:
    """The record readers follow (runtime/spark/readers.py): the committed refresh and,
    per view, its columns, types and current runs."""
    return {"refresh_id": refresh_id, "views": dict(views)}


def publish(root: Path, record: Mapping[str, Any]) -> None:
    files.write_json(root / PUBLISHED, record)


def change_file(view: str, refresh_id: int) -> str:
    return f"{view}/changes/r{refresh_id:08d}.parquet"


def _refresh_of(path: Path) -> int:
    name = path.name
    if name.startswith("r") and name.endswith(".parquet") and name[1:-8].isdigit():
        return int(name[1:-8])
    return -1


def _positional(frame: pl.DataFrame, types: tuple[SqlType, ...]) -> pl.DataFrame:
    """Parquet read back by polars: timestamps come UTC-adjusted; dbspc's are naive."""
    fix = [
        pl.col(col_name(i)).dt.replace_time_zone(None)
        for i, t in enumerate(types)
        if t.kind == "TIMESTAMP" and getattr(frame.schema[col_name(i)], "time_zone", None)
    ]
    frame = frame.with_columns(fix) if fix else frame
    return ZSet.from_frame(frame, types).frame

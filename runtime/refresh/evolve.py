"""Pipelines that evolve: views added or edited, and sources that gain columns, without
replaying the sources' history (which may be past their retention).

A checkpoint keeps the integrated contents of every source table (the pipeline's
`table.<name>` traces), so a changed program is bootstrapped from them: the new circuit
takes one step whose input is each table's whole committed contents, which yields every
view's contents and every operator's state as of the committed offsets. For each view
the published table then moves by (new contents - published contents): nothing for a
view whose definition did not change, the whole view for a new one. That step is
committed as a refresh of its own, with the same offsets, before any new change is read.

What a checkpoint cannot bootstrap is refused, naming the reason: another dialect; a
table whose source is now read differently (kind, offset, weight or op column); and a
view reading a source column the checkpoint does not hold (a column added, dropped or
retyped since). A source column no view reads may come and go: the tables keep the
columns the checkpoint holds (so `SELECT *` keeps the columns it had).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from dbspc.compiler.errors import UsageError
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.checkpoint import Manifest
from dbspc.runtime.refresh.schema import SourceColumn, parse_type, schema_changes
from dbspc.runtime.zset import WEIGHT, ZSet, col_name


def held_columns(
    program: Mapping[str, Any], now: Mapping[str, tuple[SourceColumn, ...]]
) -> dict[str, tuple[SourceColumn, ...]]:
    """Per table, the columns the views may read: for a table the checkpoint holds, those
    of its columns that are still in the source with the same type (in the checkpoint's
    order); for a new table, all of its columns."""
    old = program.get("tables", {})
    out: dict[str, tuple[SourceColumn, ...]] = {}
    for table, columns in now.items():
        if table not in old:
            out[table] = columns
            continue
        current = {c.name.lower(): c for c in columns}
        kept = []
        for name, sql in old[table]:
            c = current.get(name.lower())
            if c is not None and c.type == parse_type(sql):
                kept.append(c)
        out[table] = tuple(kept)
    return out


def schema_note(program: Mapping[str, Any], now: Mapping[str, tuple[SourceColumn, ...]]) -> str:
    """Why a column a view reads may be missing: the source changed since the checkpoint."""
    old = program.get("tables", {})
    notes = []
    for table, columns in now.items():
        if table not in old:
            continue
        held = [SourceColumn(n, parse_type(sql)) for n, sql in old[table]]
        parts = schema_changes(held, columns, order=False)  # columns are matched by name
        if parts:
            notes.append(f"table '{table}' changed since the checkpoint ({'; '.join(parts)})")
    if not notes:
        return ""
    return (
        f" [{'; '.join(notes)}: a view may read only the columns the checkpoint holds; "
        "start a new checkpoint to read the others]"
    )


def check_compatible(root: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse a program the checkpoint cannot be carried over to."""
    reasons = []
    if old.get("dialect") != new.get("dialect"):
        reasons.append(f"the dialect was {old.get('dialect')}, now {new.get('dialect')}")
    before = {s["table"]: s for s in old.get("sources", [])}
    for spec in new.get("sources", []):
        was = before.get(spec["table"])
        if was is not None and was != spec:
            reasons.append(f"source '{spec['table']}' was registered as {_source(was)}, now as {_source(spec)}")
    if reasons:
        raise UsageError(
            f"checkpoint {root} cannot be carried over to this program ({'; '.join(reasons)}); resume with the "
            "same sources, or start over with a new checkpoint directory"
        )


def _source(spec: Mapping[str, Any]) -> str:
    shown = [f"{k}={v}" for k, v in spec.items() if k not in ("table", "ops") and v is not None]
    return "(" + ", ".join(shown) + ")"


def stored_tables(root: Path, manifest: Manifest, pipeline: Pipeline) -> dict[str, ZSet]:
    """The committed contents of every table the checkpoint holds and the new program
    reads, with the new program's columns (a subset of the checkpoint's, by name)."""
    old = manifest.program.get("tables", {})
    out = {}
    for table in pipeline.program.tables:
        parts = manifest.state.get(f"table.{table}")
        if parts is None or table not in old:
            continue  # a new source: its rows come with the next refresh
        types = pipeline.table_types(table)
        held = [n.lower() for n, _ in old[table]]
        positions = [held.index(n.lower()) for n in pipeline.table_columns(table)]
        frames = [files.read_ipc(root / rel) for rel in parts]
        if not frames:
            continue
        frame = pl.concat(frames).select(
            [pl.col(col_name(i)).alias(col_name(j)) for j, i in enumerate(positions)] + [pl.col(WEIGHT)]
        )
        out[table] = ZSet.from_frame(frame, types).consolidate()
    return out

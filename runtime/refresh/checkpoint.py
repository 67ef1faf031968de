"""Checkpoints: the pipeline's state, the source offsets and the sinks, switched at once.

Layout of a checkpoint directory:

    MANIFEST.json          the commit point: everything below that is current
    state/r<k>.<t>.<p>.arrow   part p of trace t as written at refresh k (Arrow IPC)
    snapshots/<i>/r<k>/    plain table i's snapshot taken at refresh k (parquet, by Spark)

A refresh writes every new file first, then the manifest under a temporary name,
fsyncs it and renames it over MANIFEST.json (files.atomic_write). Whatever the manifest
names is complete; whatever it does not name is garbage from a refresh that never
committed (or was superseded) and is deleted. Nothing is ever loaded with pickle.

State is saved incrementally. A `Trace` is a spine of immutable consolidated runs; a
run that is the same object as at the last checkpoint is already on disk and is
referenced again instead of rewritten, so a refresh writes O(change · log state) rows,
not the whole state. (Restoring inserts the parts in order; when that recreates the
same runs, they are mapped back to their files, so a restart does not rewrite either.)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from dbspc.compiler.errors import DbspcError, InputError, UsageError
from dbspc.runtime.refresh import files
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet

FORMAT = "dbspc-spark-checkpoint/2"  # 2: outputs are table versions (sinks.py)
MANIFEST = "MANIFEST.json"


def program_hash(program: Mapping[str, Any]) -> str:
    """A hash of everything that gives the state and offsets their meaning."""
    return hashlib.sha256(json.dumps(program, sort_keys=True).encode()).hexdigest()


@dataclass
class Manifest:
    """The committed state of a job after refresh `refresh_id`."""

    refresh_id: int
    program_hash: str
    program: dict[str, Any]
    offsets: dict[str, int | None] = field(default_factory=dict)
    snapshots: dict[str, str] = field(default_factory=dict)
    state: dict[str, list[str]] = field(default_factory=dict)
    pipeline: dict[str, Any] = field(default_factory=dict)
    sinks: dict[str, Any] = field(default_factory=dict)
    # Per change/append table: [hi, row count, sum of row hashes] per refresh that read
    # rows of it, to notice rows that arrive behind the committed offset (offsets.py).
    checks: dict[str, list[list[int]]] = field(default_factory=dict)
    # Per change/append table: the files its rows were read from, when the engine lists
    # them; a later refresh then checks only files added since (Job._read).
    files: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "refresh_id": self.refresh_id,
            "program_hash": self.program_hash,
            "program": self.program,
            "offsets": self.offsets,
            "snapshots": self.snapshots,
            "state": self.state,
            "pipeline": self.pipeline,
            "sinks": self.sinks,
            "checks": self.checks,
            "files": self.files,
        }

    @staticmethod
    def from_json(value: dict[str, Any], where: Path) -> Manifest:
        if value.get("format") != FORMAT:
            raise InputError(f"{where} is not a dbspc checkpoint manifest of format {FORMAT}")
        return Manifest(
            refresh_id=int(value["refresh_id"]),
            program_hash=str(value["program_hash"]),
            program=dict(value["program"]),
            offsets=dict(value["offsets"]),
            snapshots=dict(value["snapshots"]),
            state={k: list(v) for k, v in value["state"].items()},
            pipeline=dict(value["pipeline"]),
            sinks=dict(value["sinks"]),
            checks={k: [[int(x) for x in span] for span in v] for k, v in value.get("checks", {}).items()},
            files={k: [str(f) for f in v] for k, v in value.get("files", {}).items()},
        )


def load_manifest(root: Path) -> Manifest | None:
    path = root / MANIFEST
    if not path.exists():
        return None
    return Manifest.from_json(files.read_json(path), path)


def commit(root: Path, manifest: Manifest) -> None:
    """The commit point of a refresh: after this rename, the refresh has happened."""
    files.write_json(root / MANIFEST, manifest.to_json())


def check_program(root: Path, manifest: Manifest, program: dict[str, Any], digest: str) -> None:
    """Refuse to resume a checkpoint written by a different program, saying what differs."""
    if manifest.program_hash == digest:
        return
    old, new = manifest.program, program
    reasons: list[str] = []
    for table, cols in new.get("tables", {}).items():
        before = old.get("tables", {}).get(table)
        if before is not None and before != cols:
            reasons.append(f"table '{table}' had columns {_cols(before)}, now {_cols(cols)}")
    if old.get("views") != new.get("views"):
        reasons.append("the views' SQL text differs")
    if old.get("sources") != new.get("sources"):
        reasons.append("the sources (tables, kinds or offset/weight/op columns) differ")
    if old.get("dialect") != new.get("dialect"):
        reasons.append(f"the dialect was {old.get('dialect')}, now {new.get('dialect')}")
    if old.get("time_zone", "UTC") != new.get("time_zone", "UTC"):
        reasons.append(f"the session time zone was {old.get('time_zone', 'UTC')}, now {new.get('time_zone', 'UTC')}")
    detail = "; ".join(reasons) or "the program differs"
    raise UsageError(
        f"checkpoint {root} was written by a different program ({detail}); resume with the same "
        "sources and views, or start over with a new checkpoint directory"
    )


def _cols(cols: list[list[str]]) -> str:
    return "(" + ", ".join(f"{n} {t}" for n, t in cols) + ")"


def _saved(manifest: Manifest, aliases: Mapping[str, str] | None) -> dict[str, list[str]]:
    """The manifest's traces, less the older names of those it also holds by their own."""
    aliases = aliases or {}
    return {k: v for k, v in manifest.state.items() if not (k in aliases and aliases[k] in manifest.state)}


def _differs(saved: Mapping[str, list[str]], traces: Mapping[str, Trace]) -> list[str]:
    """The names in one of the two and not the other; a `derived` trace may be missing."""
    rebuilt = {name for name, trace in traces.items() if trace.derived and name not in saved}
    return sorted((set(traces) - rebuilt) ^ set(saved))


def trace_parts(trace: Trace) -> list[pl.DataFrame]:
    """The trace's runs (oldest first), each a consolidated frame that never changes
    once made, so a checkpoint writes each run once."""
    return trace.runs()


# What is on disk already: per trace, the part frames and the files holding them.
Known = dict[str, list[tuple[pl.DataFrame, str]]]


class StateStore:
    """Writes and reads the traces of a Pipeline under <checkpoint>/state."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.known: Known = {}

    def save(self, refresh_id: int, traces: Mapping[str, Trace]) -> tuple[dict[str, list[str]], Known]:
        """Write the parts not on disk yet; returns the manifest's state section and
        what will be known on disk once the manifest naming it commits."""
        section: dict[str, list[str]] = {}
        known: Known = {}
        for index, name in enumerate(sorted(traces)):
            previous = self.known.get(name, [])
            entries: list[tuple[pl.DataFrame, str]] = []
            for part, frame in enumerate(trace_parts(traces[name])):
                if frame.height == 0:
                    continue
                existing = next((f for g, f in previous if g is frame), None)
                if existing is None:
                    existing = f"state/r{refresh_id:08d}.{index:04d}.{part:03d}.arrow"
                    files.write_ipc(self.root / existing, traces[name].saved_run(frame))
                entries.append((frame, existing))
            section[name] = [f for _, f in entries]
            known[name] = entries
        return section, known

    def load(self, manifest: Manifest, traces: Mapping[str, Trace], aliases: Mapping[str, str] | None = None) -> None:
        """Refill fresh traces from the manifest's parts (the caller then calls
        Pipeline.restored). A trace the manifest does not know means another program; a `derived` trace
        it lacks stays empty, for its owner's `restored` to rebuild.
        `aliases` (Pipeline.state_aliases): a name an older checkpoint also saved a
        trace under, skipped when the manifest has the trace's own name too."""
        state = _saved(manifest, aliases)
        differs = _differs(state, traces)
        if differs:
            raise DbspcError(f"checkpoint state does not match the program's state (differs in {differs[:5]})")
        self.known = {}
        for name, parts in state.items():
            trace = traces[name]
            frames = [files.read_ipc(self.root / rel) for rel in parts]
            if not trace.restore_runs(frames):  # parts in another run order: rebuild them
                for frame in frames:
                    trace.insert(ZSet(frame.select([*ZSet.empty(trace.types).columns, WEIGHT]), trace.types))
            # Each insert makes one run and a merge removes one: as many runs as parts
            # (of the same sizes) means no merge happened and run i holds part i.
            restored = trace_parts(trace)
            if [f.height for f in restored] == [f.height for f in frames]:
                self.known[name] = list(zip(restored, parts, strict=True))

    def fits(self, manifest: Manifest, traces: Mapping[str, Trace], aliases: Mapping[str, str] | None = None) -> bool:
        """Whether `load` would find the manifest's traces to be exactly the program's."""
        return not _differs(_saved(manifest, aliases), traces)

    def collect_garbage(self, manifest: Manifest | None) -> None:
        """Delete state files and snapshots the manifest does not name."""
        keep = set()
        if manifest is not None:
            keep = {rel for parts in manifest.state.values() for rel in parts}
            keep |= set(manifest.snapshots.values())
        state_dir = self.root / "state"
        if state_dir.is_dir():
            for path in state_dir.iterdir():
                if f"state/{path.name}" not in keep:
                    files.remove(path)
        snap_dir = self.root / "snapshots"
        if snap_dir.is_dir():
            for table_dir in snap_dir.iterdir():
                for path in table_dir.iterdir() if table_dir.is_dir() else ():
                    if f"snapshots/{table_dir.name}/{path.name}" not in keep:
                        files.remove(path)

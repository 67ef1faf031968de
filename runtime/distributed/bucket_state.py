"""The state of one stage in one bucket, kept on storage every executor sees and cached
in the Python worker that last ran it.

Layout under the state directory (a path every executor reads and writes):

    COMMITTED.json               {"refresh": k}: the driver's commit point
    s<stage>/b<bucket>/m<k>.json  the bucket's state after refresh k: its trace parts and meta
    s<stage>/b<bucket>/state/...  the parts (checkpoint.StateStore: a refresh writes only
                                  runs that are new since the bucket's previous save)

A task of refresh k starts from the bucket's newest manifest at or below the committed
refresh (a bucket no change reached keeps an older one). It may run more than once
(Spark retries a task, or a failed refresh is run again): files are named by k, so a
rerun rewrites the same names, and nothing counts until the driver commits k.

The cache keeps, per worker process, the executor of each (stage, bucket) it ran and the
refresh its state is at; a task whose starting manifest is that refresh reads nothing.
Otherwise (another worker ran the bucket last, or the cached state is of a refresh that
never committed) it reloads from the manifest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from dbspc.compiler.errors import UsageError
from dbspc.runtime.refresh import files
from dbspc.runtime.refresh.checkpoint import Manifest, StateStore
from dbspc.runtime.trace import Trace

COMMITTED = "COMMITTED.json"
_MANIFEST = re.compile(r"^m(\d{8})\.json$")
# How states are spread over buckets. 2: a table read by one key keeps its share by that
# key, checked in the stage that reads it (plan.py's Check); 1 (unrecorded): every share
# by the whole row. A state of another layout would be read from the wrong buckets.
LAYOUT = 2


def committed(root: Path) -> int:
    path = root / COMMITTED
    if not path.exists():
        return 0
    record = files.read_json(path)
    check_layout(record, str(root))
    return int(record["refresh"])


def check_layout(record: Mapping[str, Any], where: str) -> None:
    """Refuse a state whose record (COMMITTED.json, or the pipeline manifest's section)
    names another layout; a record without one is of layout 1."""
    found = int(record.get("layout", 1))
    if found != LAYOUT:
        raise UsageError(
            f"the distributed state in {where} was written by another version of dbspc (bucket layout {found}, "
            f"now {LAYOUT}); start over with a new checkpoint"
        )


def commit(root: Path, refresh: int) -> None:
    files.write_json(root / COMMITTED, {"refresh": refresh, "layout": LAYOUT})


def bucket_dir(root: Path, stage: int, bucket: int) -> Path:
    return root / f"s{stage}" / f"b{bucket}"


def _manifests(where: Path) -> list[tuple[int, Path]]:
    """The bucket manifests in `where`, by the refresh each is of."""
    found = []
    if where.is_dir():
        for p in where.iterdir():
            m = _MANIFEST.match(p.name)
            if m:
                found.append((int(m.group(1)), p))
    return found


def newest_manifest(where: Path, upto: int) -> int:
    """The newest refresh at or below `upto` with a manifest here (0: none)."""
    return max((k for k, _ in _manifests(where) if k <= upto), default=0)


def forget_uncommitted(root: Path, base: int) -> None:
    """Delete bucket manifests of refreshes after `base`, which never committed: a bucket
    that no change reaches in the next attempt must not start from them later."""
    for where in root.glob("s*/b*"):
        for k, path in _manifests(where):
            if k > base:
                files.remove(path)


class Held(Protocol):
    """What a bucket keeps: a StageExecutor, or stage 0's share of the tables."""

    steps: int

    def traces(self) -> dict[str, Trace]: ...

    def meta(self) -> Mapping[str, object]: ...

    def restored(self, meta: dict[str, Any]) -> None: ...


H = TypeVar("H", bound=Held)


def collect_garbage(root: Path, committed: int) -> None:
    """After refresh `committed` committed: per bucket, every manifest older than the
    newest one at or below it, and every state file that one does not name."""
    for where in root.glob("s*/b*"):
        found = _manifests(where)
        newest = max((k for k, _ in found if k <= committed), default=0)
        if not newest:
            continue
        for k, path in found:
            if k < newest:
                files.remove(path)
        keep = {rel for parts in files.read_json(where / f"m{newest:08d}.json")["state"].values() for rel in parts}
        for path in (where / "state").glob("*") if (where / "state").is_dir() else ():
            if f"state/{path.name}" not in keep:
                files.remove(path)


@dataclass
class Bucket(Generic[H]):
    executor: H
    store: StateStore
    at: int  # the refresh its in-memory state reflects
    bytes_read: int = 0  # state read from storage by the last open
    cached: bool = False  # the last open found it in this worker's memory


# Per Python worker: (state root, stage, bucket) -> what it holds. Workers are reused
# across tasks (spark.python.worker.reuse, on by default), so this outlives a task.
_CACHE: dict[tuple[str, int, int], Bucket[Any]] = {}


def open_bucket(root: Path, stage: int, bucket: int, base: int, make: Callable[[], H]) -> Bucket[H]:
    """The bucket's state holder (`make()` makes an empty one) as of committed refresh `base`."""
    where = bucket_dir(root, stage, bucket)
    start = newest_manifest(where, base)
    key = (str(root), stage, bucket)
    cached = _CACHE.get(key)
    if cached is not None and cached.at == start:
        cached.bytes_read, cached.cached = 0, True
        return cached
    executor = make()
    store = StateStore(where)
    read = 0
    if start:
        record = files.read_json(where / f"m{start:08d}.json")
        parts: dict[str, list[str]] = record["state"]
        read = sum((where / rel).stat().st_size for rel in (r for v in parts.values() for r in v))
        store.load(_as_manifest(start, parts), executor.traces())
        executor.restored(record["meta"])
    opened = Bucket(executor, store, start, read)
    _CACHE[key] = opened
    return opened


def save_bucket(root: Path, stage: int, bucket: int, opened: Bucket[Any], refresh: int) -> int:
    """Write the bucket's state after `refresh` (new runs only); returns bytes written."""
    where = bucket_dir(root, stage, bucket)
    section, known = opened.store.save(refresh, opened.executor.traces())
    written = sum((where / rel).stat().st_size for v in section.values() for rel in v if f"r{refresh:08d}." in rel)
    files.write_json(where / f"m{refresh:08d}.json", {"state": section, "meta": opened.executor.meta()})
    opened.store.known = known
    opened.at = refresh
    return written


def forget(root: Path, stage: int, bucket: int) -> None:
    """Drop a cached bucket whose step failed half-way (its memory may be ahead)."""
    _CACHE.pop((str(root), stage, bucket), None)


def _as_manifest(refresh: int, parts: dict[str, list[str]]) -> Manifest:
    empty: dict[str, Any] = {}
    return Manifest(refresh, "", empty, state=parts)

"""Design (b)'s state: one operator's integrated Z-set, split into key buckets, each a spine of sorted runs.

On disk, under <state>/<op>/b<bucket>/:
  r<version>-<n>.parquet   a run: rows sorted by the key column, consolidated (no zero weights);
  m<version>.json          the bucket's manifest at that version: the run files, oldest first.
A refresh that touches a bucket writes its change as one new run (work ~ the change) and, as in
DBSP's spine, merges the newest runs while the older one is at most twice as large (sizes grow
geometrically, so a row is rewritten O(log(state/change)) times over its life). The refresh
becomes visible only when the driver switches <state>/manifest.json to the new version; bucket
manifests newer than it are ignored, so a failed refresh leaves the previous state readable.

Executors keep each bucket they served in a module-level cache (Python workers are reused), keyed
by (state dir, op, bucket) and holding the last two versions, so a task that lands where its bucket
was served before reads nothing from disk; a task elsewhere reads the bucket's runs (the read
amplification of this layout is the whole bucket, once per cache miss).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

ROW_GROUP = 1024  # granularity at which a selective (row-group) cold read is reckoned


def committed(state: Path) -> int:
    """The version the last successful refresh published (-1: nothing yet)."""
    m = state / "manifest.json"
    return json.loads(m.read_text())["version"] if m.exists() else -1


def commit(state: Path, version: int) -> None:
    """Publish `version` atomically (write then rename)."""
    tmp = state / "manifest.json.tmp"
    tmp.write_text(json.dumps({"version": version}))
    os.replace(tmp, state / "manifest.json")


@dataclass
class Spec:
    """An operator's state: `cols` identify a row (the first is the bucket key), `sums` add up."""

    op: str
    cols: list[str]
    sums: list[str]
    types: dict[str, pl.DataType]

    @property
    def key(self) -> str:
        return self.cols[0]


@dataclass
class Bucket:
    """One bucket of one operator at one version: its runs in memory, each sorted by key."""

    spec: Spec
    version: int
    runs: list[pl.DataFrame]
    files: list[str]
    stats: dict[str, float] = field(default_factory=dict)

    def lookup(self, keys: np.ndarray) -> pl.DataFrame:
        """The consolidated rows whose key is in `keys`: binary searches, work ~ |keys| log |state| + matches."""
        keys = np.unique(keys)
        parts = []
        touched = 0
        for run in self.runs:
            k = run[self.spec.key].to_numpy()
            lo, hi = np.searchsorted(k, keys, "left"), np.searchsorted(k, keys, "right")
            n = hi - lo
            idx = np.repeat(lo, n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
            parts.append(run[idx])
            # How many rows a cold read at ROW_GROUP granularity would have to fetch for these keys.
            touched += len(np.unique(lo[n > 0] // ROW_GROUP)) * ROW_GROUP
        self.stats["lookup_keys"] = self.stats.get("lookup_keys", 0) + len(keys)
        self.stats["selective_rows"] = self.stats.get("selective_rows", 0) + touched
        return consolidate(self.spec, pl.concat(parts)) if parts else empty(self.spec)

    def rows(self) -> int:
        return sum(r.height for r in self.runs)


def empty(spec: Spec) -> pl.DataFrame:
    return pl.DataFrame(schema={c: spec.types[c] for c in spec.cols + spec.sums})


def consolidate(spec: Spec, frame: pl.DataFrame) -> pl.DataFrame:
    """Sum the `sums` of equal rows, drop rows whose sums are all zero, sort by key."""
    if frame.height == 0:
        return frame
    out = frame.group_by(spec.cols).agg([pl.col(s).sum() for s in spec.sums])
    return out.filter(pl.any_horizontal([pl.col(s) != 0 for s in spec.sums])).sort(spec.key)


# Executor-side cache: (state dir, op, bucket) -> {version: Bucket}; lives as long as the Python worker.
_CACHE: dict[tuple[str, str, int], dict[int, Bucket]] = {}


def _bucket_dir(state: Path, spec: Spec, b: int) -> Path:
    return state / spec.op / f"b{b}"


def _latest_manifest(d: Path, upto: int) -> int:
    """The bucket's newest manifest version <= upto (-1 if none): later ones are uncommitted leftovers."""
    best = -1
    if d.exists():
        for p in d.glob("m*.json"):
            v = int(p.stem[1:])
            if best < v <= upto:
                best = v
    return best


def load(state: Path, spec: Spec, b: int, upto: int) -> Bucket:
    """Bucket b as of committed version `upto`: from the executor cache, else from its run files."""
    d = _bucket_dir(state, spec, b)
    v = _latest_manifest(d, upto)
    cached = _CACHE.get((str(state), spec.op, b), {})
    if v in cached:
        bucket = cached[v]
        bucket.stats = {"cache_hit": 1, "disk_read_bytes": 0}
        return bucket
    t = time.perf_counter()
    files: list[str] = json.loads((d / f"m{v}.json").read_text()) if v >= 0 else []
    runs = [pl.from_arrow(pq.read_table(d / f)) for f in files]
    read = sum((d / f).stat().st_size for f in files)
    bucket = Bucket(spec, v, [r for r in runs if isinstance(r, pl.DataFrame)], files)
    bucket.stats = {"cache_hit": 0, "disk_read_bytes": read, "load_s": time.perf_counter() - t}
    return bucket


def update(state: Path, bucket: Bucket, b: int, delta: pl.DataFrame, version: int) -> Bucket:
    """Bucket b at `version`: the old runs plus `delta` as a new run, merged spine-style; written, cached.

    Deterministic in (old version, delta), so a re-executed task rewrites identical files.
    """
    spec = bucket.spec
    d = _bucket_dir(state, spec, b)
    d.mkdir(parents=True, exist_ok=True)
    runs, files = list(bucket.runs), list(bucket.files)
    written = merged = 0
    delta = consolidate(spec, delta)
    if delta.height:
        runs.append(delta)
        files.append("")
        n = 0
        while len(runs) > 1 and runs[-2].height <= 2 * runs[-1].height:
            merged += runs[-2].height + runs[-1].height
            runs[-2:] = [consolidate(spec, pl.concat([runs[-2], runs[-1]]))]
            files[-2:] = [""]
        for i, (run, f) in enumerate(zip(runs, files, strict=True)):
            if f == "":  # a new or merged run: write it under this version
                name = f"r{version}-{n}.parquet"
                n += 1
                pq.write_table(run.to_arrow(), d / name, row_group_size=ROW_GROUP * 64)
                written += (d / name).stat().st_size
                files[i] = name
    (d / f"m{version}.json").write_text(json.dumps(files))
    new = Bucket(spec, version, runs, files, dict(bucket.stats))
    new.stats.update({"written_bytes": written, "merged_rows": merged, "state_rows": new.rows(),
                      "state_bytes": sum((d / f).stat().st_size for f in files), "runs": len(runs)})
    slot = _CACHE.setdefault((str(state), spec.op, b), {})
    slot[version] = new
    for old in sorted(slot)[:-2]:  # keep the base and the new version (a re-run or a failed commit needs the base)
        del slot[old]
    return new


def state_bytes(state: Path, spec: Spec, upto: int) -> tuple[int, int]:
    """(bytes, run files) of an operator's committed state, from the manifests (driver-side metadata only)."""
    total = files = 0
    root = state / spec.op
    for d in sorted(root.glob("b*")) if root.exists() else []:
        v = _latest_manifest(d, upto)
        if v >= 0:
            names = json.loads((d / f"m{v}.json").read_text())
            total += sum((d / f).stat().st_size for f in names)
            files += len(names)
    return total, files

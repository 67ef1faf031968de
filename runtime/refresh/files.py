"""Durable, atomic file writes: the building block of the checkpoint protocol.

A file is written under a temporary name starting with "." (Spark and the GC ignore
such names), flushed and fsynced, then renamed over its final name with `os.replace`,
and the directory is fsynced so the rename itself survives a power cut. A reader, or a
restarted job, therefore sees either no file or the whole file, never a torn one.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from dbspc.runtime.refresh.failpoints import failpoint


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write `path` through `write(file)`, all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    failpoint(f"written {tmp.name}")
    os.replace(tmp, path)
    fsync_dir(path.parent)
    failpoint(f"renamed {path.name}")


def write_json(path: Path, value: Any) -> None:
    data = json.dumps(value, indent=1, sort_keys=True).encode()

    def write(f: IO[bytes]) -> None:
        f.write(data)

    atomic_write(path, write)


def read_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def write_parquet(path: Path, table: pa.Table) -> None:
    atomic_write(path, lambda f: pq.write_table(table, f, compression="zstd"))


def write_ipc(path: Path, frame: pl.DataFrame) -> None:
    """Arrow IPC (Feather v2): loading it runs no code, unlike pickle. Uncompressed, so
    that `read_ipc` maps it instead of decoding it."""
    atomic_write(path, lambda f: frame.write_ipc(f, compression="uncompressed"))


def read_ipc(path: Path) -> pl.DataFrame:
    """An IPC file as a frame over its memory map: nothing is read until a page is
    touched, so a state part costs what its probes touch, and a reload after a restart
    or on another worker is a map, not a decode (3M rows: 3 ms against 100 ms for
    zstd). The map outlives the file's deletion (files are replaced by rename, never
    rewritten in place). Compressed files of older checkpoints are decoded."""
    frame = pl.from_arrow(ipc.open_file(pa.memory_map(str(path))).read_all())
    assert isinstance(frame, pl.DataFrame)
    return frame


def remove(path: Path) -> None:
    """Delete a file or a directory tree if it exists (GC of unreferenced files)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def is_temporary(path: Path) -> bool:
    return path.name.startswith(".") and ".tmp-" in path.name

"""Where a job's outputs live: a local directory, or any Hadoop file system.

The published tables and change logs are read by Spark and by any engine that reads
parquet, so they may live wherever the team keeps tables: `s3a://`, `abfss://`,
`hdfs://` or a local disk. `HadoopStorage` reaches those through the JVM's Hadoop
`FileSystem` of the Spark session (the same client, credentials and configuration
Spark itself uses); `LocalStorage` is the fast path for a local directory, with fsync.

Paths are relative to the storage's root and use "/" on both.  A write is atomic: a
file is written under a hidden name ("." prefix: Spark, Hadoop and Arrow readers skip
it) and renamed into place, so a reader sees the whole file or none of it.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from dbspc.runtime.refresh import files


class Storage(Protocol):
    """The file operations the published outputs need."""

    def uri(self, rel: str = "") -> str:
        """The absolute location of `rel`, as Spark's LOCATION and readers take it."""
        ...

    def exists(self, rel: str) -> bool: ...

    def listdir(self, rel: str) -> list[str]:
        """The names in directory `rel` (none if it does not exist)."""
        ...

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write `rel` whole or not at all."""
        ...

    def read_bytes(self, rel: str) -> bytes: ...

    def create_new(self, rel: str, data: bytes) -> bool:
        """Create `rel` holding `data` only if it does not exist (False if it did)."""
        ...

    def copy(self, src: str, dst: str) -> None:
        """The cheapest copy the file system has (a hard link on a local disk)."""
        ...

    def rename(self, src: str, dst: str) -> None: ...

    def mkdirs(self, rel: str) -> None: ...

    def remove(self, rel: str) -> None:
        """Delete a file or a directory tree, if it exists."""
        ...


def write_parquet(storage: Storage, rel: str, table: pa.Table) -> None:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    storage.write_bytes(rel, sink.getvalue())


def read_parquet(storage: Storage, rel: str) -> pa.Table:
    return pq.read_table(io.BytesIO(storage.read_bytes(rel)))


class LocalStorage:
    """A directory of the local file system."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()

    def _path(self, rel: str) -> Path:
        return self.root / rel if rel else self.root

    def uri(self, rel: str = "") -> str:
        return self._path(rel).as_uri()

    def __str__(self) -> str:
        return str(self.root)

    def exists(self, rel: str) -> bool:
        return self._path(rel).exists()

    def listdir(self, rel: str) -> list[str]:
        path = self._path(rel)
        return sorted(p.name for p in path.iterdir()) if path.is_dir() else []

    def write_bytes(self, rel: str, data: bytes) -> None:
        files.atomic_write(self._path(rel), lambda f: _put(f, data))

    def read_bytes(self, rel: str) -> bytes:
        return self._path(rel).read_bytes()

    def create_new(self, rel: str, data: bytes) -> bool:
        # Written whole under a temporary name, then linked: link fails if the name
        # exists, so of two writers at once exactly one wins.
        path = self._path(rel)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        files.atomic_write(tmp, lambda f: _put(f, data))
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        finally:
            files.remove(tmp)

    def copy(self, src: str, dst: str) -> None:
        target = self._path(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        files.remove(target)
        try:
            os.link(self._path(src), target)  # immutable files: sharing the inode is safe
        except OSError:
            shutil.copyfile(self._path(src), target)

    def rename(self, src: str, dst: str) -> None:
        target = self._path(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self._path(src), target)
        files.fsync_dir(target.parent)

    def remove(self, rel: str) -> None:
        files.remove(self._path(rel))

    def mkdirs(self, rel: str) -> None:
        self._path(rel).mkdir(parents=True, exist_ok=True)


class HadoopStorage:
    """A directory of a Hadoop file system (any scheme Spark's Hadoop configuration
    knows: hdfs, s3a, abfss, gs, viewfs, file), driven through py4j."""

    def __init__(self, spark: Any, root: str) -> None:
        jvm = spark.sparkContext._jvm
        self._jvm = jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()
        path = jvm.org.apache.hadoop.fs.Path(root.rstrip("/"))
        self._fs = path.getFileSystem(self._conf)
        self._root = self._fs.makeQualified(path)

    def _path(self, rel: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self._root, rel) if rel else self._root

    def uri(self, rel: str = "") -> str:
        return str(self._path(rel).toString())

    def __str__(self) -> str:
        return self.uri()

    def exists(self, rel: str) -> bool:
        return bool(self._fs.exists(self._path(rel)))

    def listdir(self, rel: str) -> list[str]:
        path = self._path(rel)
        if not self._fs.exists(path):
            return []
        return sorted(str(s.getPath().getName()) for s in self._fs.listStatus(path))

    def _write(self, path: Any, data: bytes, overwrite: bool) -> None:
        out = self._fs.create(path, overwrite)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def write_bytes(self, rel: str, data: bytes) -> None:
        path = self._path(rel)
        tmp = self._jvm.org.apache.hadoop.fs.Path(path.getParent(), f".{path.getName()}.tmp-{os.getpid()}")
        self._write(tmp, data, True)
        self._fs.delete(path, False)
        if not self._fs.rename(tmp, path):
            raise OSError(f"cannot rename {tmp.toString()} to {path.toString()}")

    def read_bytes(self, rel: str) -> bytes:
        stream = self._fs.open(self._path(rel))
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def create_new(self, rel: str, data: bytes) -> bool:
        path = self._path(rel)
        if not self._fs.createNewFile(path):  # atomic on HDFS; best effort elsewhere
            return False
        self._write(path, data, True)
        return True

    def copy(self, src: str, dst: str) -> None:
        util = self._jvm.org.apache.hadoop.fs.FileUtil
        if not util.copy(self._fs, self._path(src), self._fs, self._path(dst), False, True, self._conf):
            raise OSError(f"cannot copy {self.uri(src)} to {self.uri(dst)}")

    def rename(self, src: str, dst: str) -> None:
        target = self._path(dst)
        self._fs.mkdirs(target.getParent())
        self._fs.delete(target, False)
        if not self._fs.rename(self._path(src), target):
            raise OSError(f"cannot rename {self.uri(src)} to {self.uri(dst)}")

    def remove(self, rel: str) -> None:
        self._fs.delete(self._path(rel), True)

    def mkdirs(self, rel: str) -> None:
        self._fs.mkdirs(self._path(rel))


def _put(f: Any, data: bytes) -> None:
    f.write(data)


def is_local(location: str) -> bool:
    """A plain path or a file: URI (served by LocalStorage)."""
    return "://" not in location or location.startswith("file:")


def at(location: str, spark: Any) -> Storage:
    """The storage of `location`: LocalStorage for a path or file: URI, else the Hadoop
    file system Spark's configuration gives that URI."""
    if is_local(location):
        return LocalStorage(location.removeprefix("file://").removeprefix("file:"))
    return HadoopStorage(spark, location)

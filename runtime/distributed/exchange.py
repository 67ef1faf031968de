"""Rows moved between buckets, as files on the shared file system (distributed mode).

Under a refresh's directory `x/r<k>`, the rows sent to the buckets of slot s (the
buckets b with b mod n = s, slots.py) are the files of `e/s<s>/`, one per stream,
producer and target slot, each row tagged with its bucket (column BUCKET):

    e/s<s>/t<table>-p<partition>-<i>.arrow   a table's change, from the job that reads it
    e/s<s>/c<channel>-s<slot>-0.arrow         a channel's rows, from every bucket of a slot

so a task reads only its own slot's files, in name order, and a refresh writes about
n x n files per channel, not one per pair of buckets (a file costs about a millisecond
to write and one to read, which made the exchange most of a stage's time at 16
buckets). Names are fixed by what produced the rows: a task Spark runs again writes the
same names over the same rows, and the driver deletes the directory before an attempt
of the refresh. Files are renamed into place when complete; they are not synced, since a
refresh interrupted by a crash is run again from its start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from dbspc.compiler.types import SqlType
from dbspc.runtime.zset import ZSet, concat_frames

EXCHANGE = "e"
BUCKET = "_dbspc_bucket"  # in an exchange file: the bucket a row goes to


def table_stream(index: int) -> str:
    return f"t{index}"


def channel_stream(ch: int) -> str:
    return f"c{ch}"


class Outbox:
    """What a task sends, held per stream and target slot until written: by `flush`,
    or by `flush_full` once a file would hold `limit` rows."""

    def __init__(self, out: Path, slots: int, producer: str) -> None:
        self.out, self.slots, self.producer = out, slots, producer
        self._held: dict[tuple[str, int], list[pl.DataFrame]] = {}
        self._written: dict[tuple[str, int], int] = {}  # files so far: names fixed by the input's order

    def put(self, stream: str, parts: Mapping[int, ZSet]) -> None:
        """`parts[t]` to bucket t."""
        for target, z in parts.items():
            if len(z):
                key = (stream, target % self.slots)
                self._held.setdefault(key, []).append(z.frame.with_columns(pl.lit(target, pl.Int32).alias(BUCKET)))

    def flush_full(self, limit: int) -> None:
        for key in [k for k, frames in self._held.items() if sum(f.height for f in frames) >= limit]:
            self._write(key)

    def flush(self) -> None:
        for key in sorted(self._held):
            self._write(key)

    def _write(self, key: tuple[str, int]) -> None:
        stream, slot = key
        frame = concat_frames(self._held.pop(key))
        i = self._written.get(key, 0)
        self._written[key] = i + 1
        path = self.out / EXCHANGE / f"s{slot}" / f"{stream}-{self.producer}-{i}.arrow"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        frame.write_ipc(tmp, compression="lz4")
        os.replace(tmp, path)


def receive(out: Path, slot: int, streams: Mapping[str, tuple[SqlType, ...]]) -> dict[int, dict[str, ZSet]]:
    """Per bucket of `slot`, the rows each stream sent to it (streams that sent a bucket
    none are left out of its entry, and buckets that got none are left out)."""
    where = out / EXCHANGE / f"s{slot}"
    found: dict[str, list[pl.DataFrame]] = {}
    if where.is_dir():
        for path in sorted(where.iterdir()):
            stream = path.name.split("-", 1)[0]
            if stream in streams and path.suffix == ".arrow":  # not a temporary (".<name>.tmp-<pid>")
                found.setdefault(stream, []).append(pl.read_ipc(path))
    by_bucket: dict[int, dict[str, ZSet]] = {}
    for stream, frames in found.items():
        whole = concat_frames(frames)
        for (bucket,), frame in whole.partition_by(BUCKET, as_dict=True, maintain_order=True).items():
            by_bucket.setdefault(int(bucket), {})[stream] = ZSet(frame.drop(BUCKET), streams[stream])
    return by_bucket

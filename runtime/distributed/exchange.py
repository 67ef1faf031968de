"""Rows moved between buckets, as files on the shared file system (distributed mode).

Under a refresh's directory `x/r<k>`, the rows sent to bucket t are the files of
`e/b<t>/`, one per stream, producer and target:

    e/b<t>/t<table>-p<partition>-<batch>.arrow   a table's change, from the job that reads it
    e/b<t>/c<channel>-b<bucket>.arrow            a channel's rows, from a stage's bucket

so a task reads only its own bucket's files, in name order. Names are fixed by what
produced the rows: a task Spark runs again writes the same names over the same rows,
and the driver deletes the directory before an attempt of the refresh. Files are
renamed into place when complete; they are not synced, since a refresh interrupted by a
crash is run again from its start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from dbspc.compiler.types import SqlType
from dbspc.runtime.zset import ZSet

EXCHANGE = "e"


def table_stream(index: int) -> str:
    return f"t{index}"


def channel_stream(ch: int) -> str:
    return f"c{ch}"


def send(out: Path, stream: str, producer: str, parts: Mapping[int, ZSet]) -> None:
    """`parts[t]` to bucket t, from `producer` (a name unique among the stream's producers)."""
    for target, z in parts.items():
        if len(z) == 0:
            continue
        path = out / EXCHANGE / f"b{target}" / f"{stream}-{producer}.arrow"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        z.frame.write_ipc(tmp, compression="lz4")
        os.replace(tmp, path)


def receive(out: Path, bucket: int, streams: Mapping[str, tuple[SqlType, ...]]) -> dict[str, ZSet]:
    """The rows each stream sent to `bucket` (streams that sent none are left out)."""
    where = out / EXCHANGE / f"b{bucket}"
    found: dict[str, list[ZSet]] = {}
    if where.is_dir():
        for path in sorted(where.iterdir()):
            stream = path.name.split("-", 1)[0]
            if stream in streams and path.suffix == ".arrow":  # not a temporary (".<name>.tmp-<pid>")
                found.setdefault(stream, []).append(ZSet(pl.read_ipc(path), streams[stream]))
    return {s: ZSet.concat(parts, streams[s]) for s, parts in found.items()}

"""What the refresh layer needs from the system that holds the sources.

The refresh protocol (job.py) needs only a few things from it: a table's schema, the
rows of a change or append table above an offset, a count and hash sum of its rows up
to an offset, and a plain table's difference from its last snapshot. Keeping the
protocol this narrow, and in Arrow, lets Spark provide it (runtime/spark/engine.py) and
lets the crash tests drive the same checkpoint and sink code from a file-based engine
without paying a Spark session per killed process.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import pyarrow as pa


class Engine(Protocol):
    """What a refresh needs from the system that holds the sources."""

    def schema(self, source: str, table: str) -> pa.Schema:
        """The source's current schema (called before every read, to catch drift), with
        the Arrow types schema.arrow_type gives; a column the engine cannot map is an
        InputError naming it and `table` (the name the views use)."""
        ...

    def read_after(
        self,
        source: str,
        select: Sequence[tuple[str, str]],
        offset: str,
        after: int | None,
        within: Sequence[str] | None = None,
    ) -> pa.Table:
        """Rows whose `offset` column is above `after` (all rows if None) or NULL, with
        the columns `select` names as (source column, alias), as one Arrow table, plus
        a column HASH: a 64-bit hash of the selected source columns of each row.

        `within`: files (as `files` lists them) known to hold every such row, because
        the others were all read by earlier refreshes; the engine may read only these."""
        ...

    def summary(
        self, source: str, columns: Sequence[str], offset: str, upto: int, after: int | None = None
    ) -> tuple[int, int]:
        """The row count and the sum of HASH (as `read_after` computes it over
        `columns`) of the rows whose offset is <= `upto` (and > `after`, if given): one
        aggregate, no transfer."""
        ...

    def files(self, source: str) -> list[str] | None:
        """The files the source's rows are read from, if it is a table of files that are
        never rewritten in place (parquet as Spark, Delta or Iceberg write it); None if
        the engine cannot tell. It lets a refresh check only the files added since the
        last one for rows behind the committed offset, instead of every row."""
        ...

    def count_upto(self, source: str, files: Sequence[str], offset: str, upto: int) -> int | None:
        """Rows of those files of the source with `offset` <= `upto` (None: cannot tell)."""
        ...

    def oldest_offset(self, source: str, offset: str, upto: int) -> int | None:
        """The lowest offset <= `upto` among the source's rows (None if there is none)."""
        ...

    def sample(self, source: str, select: Sequence[tuple[str, str]], offset: str, upto: int) -> pa.Table:
        """At most one row whose offset is <= `upto` (the highest offset first), as
        `read_after` names its columns: for error messages only."""
        ...

    def snapshot_diff(self, source: str, columns: Sequence[str], new: Path, old: Path | None) -> pa.Table:
        """Write the source's current rows (positional columns c0..) as a parquet
        snapshot at `new`, then return `new - old` as c0.., w (+1 / -1 rows)."""
        ...

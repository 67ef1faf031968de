"""The three kinds of source a job reads, and how their rows become Z-set batches.

- `ChangeTable`: the table's columns plus a weight column (any integer, +1 insert, -1
  delete) or an operation column (insert / delete; an update is a delete plus an
  insert, as Delta's change feed writes update_preimage / update_postimage), plus an
  increasing offset column (a batch id or commit version).
  A change data feed (Delta's, or one shaped like it) is a change table as it comes:
  offset `_commit_version`, op `_change_type`; `_commit_timestamp` is metadata too.
- `AppendTable`: the table's columns plus an increasing offset column; every row is +1.
- `PlainTable`: just the table. Each refresh diffs its current contents against the
  snapshot kept at the last refresh, in Spark (EXCEPT ALL both ways). That reads and
  writes the whole table on every refresh: the costly fallback, for small tables or
  tables nothing better is known about.

Offsets: a refresh reads the rows whose offset is above the last committed one; the
highest offset it saw becomes the new committed offset. So a batch must become visible
all at once (one Spark write or one file commit), and a later batch must never get a
lower offset than one already visible. The meta columns (offset, weight, operation)
are not part of the table the views see.

The engine (Spark, or a file reader in tests) returns Arrow with positional data
columns c0.. and the meta columns renamed to the names below; this module turns that
into a consolidated-ready ZSet and checks the meta columns with whole-column polars
expressions, naming the table and the column when a value is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import polars as pl
import pyarrow as pa

from dbspc.compiler.errors import InputError, UsageError
from dbspc.compiler.types import SqlType
from dbspc.runtime.refresh.schema import SourceColumn
from dbspc.runtime.zset import WEIGHT, ZSet, col_name

# Names of the meta columns in the Arrow the engine returns.
OFFSET = "__offset"
IN_WEIGHT = "__weight"
IN_OP = "__op"
HASH = "__hash"  # a 64-bit hash of a row's source columns (see `Checks`)

# Operation values (compared lower-cased) and their weights: dbspc's own insert/delete,
# and the row kinds of Delta Lake's change data feed.
DEFAULT_OPS: Mapping[str, int] = {
    "insert": 1,
    "delete": -1,
    "update_postimage": 1,
    "update_preimage": -1,
}


# The metadata columns of Delta's change data feed: never data columns of a change table.
CHANGE_FEED_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


@dataclass(frozen=True)
class ChangeTable:
    """Rows plus a weight or operation column plus an increasing offset column."""

    table: str
    offset: str
    weight: str | None = None
    op: str | None = None
    source: str | None = None
    ops: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_OPS))
    kind: ClassVar[str] = "changes"

    def __post_init__(self) -> None:
        if (self.weight is None) == (self.op is None):
            raise UsageError(f"change table '{self.table}' needs exactly one of a weight column or an op column")
        bad = {k: v for k, v in self.ops.items() if v not in (1, -1)}
        if bad:
            raise UsageError(f"change table '{self.table}': operation weights must be 1 or -1, got {bad}")

    def meta_columns(self) -> tuple[str, ...]:
        return (self.offset, self.weight or self.op or "", *CHANGE_FEED_COLUMNS)


@dataclass(frozen=True)
class AppendTable:
    """Insert-only rows plus an increasing offset column."""

    table: str
    offset: str
    source: str | None = None
    kind: ClassVar[str] = "append"

    def meta_columns(self) -> tuple[str, ...]:
        return (self.offset,)


@dataclass(frozen=True)
class PlainTable:
    """A table with no change information: diffed against its last snapshot (costly)."""

    table: str
    source: str | None = None
    kind: ClassVar[str] = "plain"

    def meta_columns(self) -> tuple[str, ...]:
        return ()


Source = ChangeTable | AppendTable | PlainTable


def spark_name(spec: Source) -> str:
    """The Spark table (or temp view) the source reads."""
    return spec.source or spec.table


def describe(spec: Source) -> dict[str, object]:
    """What identifies a source in the checkpoint: a different one cannot resume it."""
    out: dict[str, object] = {"kind": spec.kind, "table": spec.table.lower(), "source": spark_name(spec)}
    if isinstance(spec, (ChangeTable, AppendTable)):
        out["offset"] = spec.offset
    if isinstance(spec, ChangeTable):
        out["weight"] = spec.weight
        out["op"] = spec.op
        out["ops"] = {k.lower(): v for k, v in sorted(spec.ops.items())} if spec.op else None
    return out


def where(spec: Source) -> str:
    """How errors name a source: its dbspc table, and its Spark table if that differs."""
    if spark_name(spec) == spec.table:
        return f"table '{spec.table}'"
    return f"table '{spec.table}' (Spark table '{spark_name(spec)}')"


def selection(spec: Source, columns: Sequence[SourceColumn]) -> list[tuple[str, str]]:
    """(source column, name in the transferred Arrow) for one read of a change or
    append table: data columns positionally, then the meta columns."""
    out = [(c.name, col_name(i)) for i, c in enumerate(columns)]
    if isinstance(spec, ChangeTable):
        out.append((spec.offset, OFFSET))
        out.append((spec.weight, IN_WEIGHT) if spec.weight else (spec.op or "", IN_OP))
    elif isinstance(spec, AppendTable):
        out.append((spec.offset, OFFSET))
    return out


def to_zset(spec: Source, data: pa.Table, columns: tuple[SourceColumn, ...]) -> tuple[ZSet, int | None]:
    """A transferred batch as a ZSet, and the highest offset in it (None if empty or a
    plain-table diff). Raises InputError naming the table and column of a bad value."""
    sql_types = tuple(c.type for c in columns)
    frame = pl.from_arrow(data)
    assert isinstance(frame, pl.DataFrame)
    if frame.height == 0:
        return ZSet.empty(sql_types), None
    top: int | None = None
    if isinstance(spec, (ChangeTable, AppendTable)):
        nulls = frame[OFFSET].null_count()
        if nulls:
            raise InputError(f"{where(spec)}: {nulls} row(s) have a NULL offset in column '{spec.offset}'")
        top = int(frame[OFFSET].max())  # type: ignore[arg-type]
    if isinstance(spec, ChangeTable):
        frame = frame.with_columns(_weights(spec, frame).alias(WEIGHT))
    elif isinstance(spec, AppendTable):
        frame = frame.with_columns(pl.lit(1, dtype=pl.Int64()).alias(WEIGHT))
    return ZSet.from_frame(naive_utc(frame, sql_types), sql_types), top


def combine(high: int, low: int) -> int:
    """The sum of 64-bit hashes from the sums of their high (signed) and low 32 bits,
    which engines can add up without overflow."""
    return int(high) * (1 << 32) + int(low)


def hash_sum(data: pa.Table) -> int:
    """The sum of the HASH column of a transferred batch, exactly."""
    frame = pl.from_arrow(data.select([HASH]))
    assert isinstance(frame, pl.DataFrame)
    h = pl.col(HASH).cast(pl.Int64())
    sums = frame.select((h // (1 << 32)).sum().alias("hi"), (h % (1 << 32)).sum().alias("lo")).row(0)
    return combine(sums[0] or 0, sums[1] or 0)


def _weights(spec: ChangeTable, frame: pl.DataFrame) -> pl.Series:
    if spec.weight is not None:
        weights = frame[IN_WEIGHT]
        if weights.null_count():
            raise InputError(
                f"{where(spec)}: {weights.null_count()} row(s) have a NULL weight in column '{spec.weight}'"
            )
        if not weights.dtype.is_integer():
            raise InputError(f"{where(spec)}: weight column '{spec.weight}' must be an integer column")
        return weights.cast(pl.Int64())
    ops = {k.lower(): v for k, v in spec.ops.items()}
    lowered = frame[IN_OP].cast(pl.String()).str.to_lowercase()
    weights = lowered.replace_strict(ops, default=None, return_dtype=pl.Int64())
    bad = lowered.filter(weights.is_null())
    if bad.len():
        shown = ", ".join("NULL" if v is None else repr(v) for v in bad.unique().sort(nulls_last=False).head(3))
        raise InputError(
            f"{where(spec)}: {bad.len()} row(s) have an unknown operation in column '{spec.op}' ({shown}); "
            f"expected one of {', '.join(sorted(ops))}"
        )
    return weights


def naive_utc(frame: pl.DataFrame, types: Sequence[SqlType]) -> pl.DataFrame:
    """dbspc holds TIMESTAMP as naive UTC; Spark and parquet files hand out UTC-adjusted
    instants (positional columns c0..)."""
    fix = [
        pl.col(col_name(i)).dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        for i, t in enumerate(types)
        if t.kind == "TIMESTAMP" and getattr(frame.schema[col_name(i)], "time_zone", None)
    ]
    return frame.with_columns(fix) if fix else frame

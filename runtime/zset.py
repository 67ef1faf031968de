"""Columnar Z-set batches.

A Z-set maps rows to integer weights (DBSP §4). A batch holds it as a polars frame:
columns `c0 .. c{n-1}` in the relation's column order, with SQL types fixed by the
compiler, plus the int64 weight column `w`. A consolidated batch has each distinct
row once and no zero weight; kernels consolidate where the algebra needs it, never
row by row in Python.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from compiler.types import SqlType

WEIGHT = "w"


def col_name(index: int) -> str:
    return f"c{index}"


def polars_dtype(t: SqlType) -> pl.DataType:
    """The columnar type that holds values of SQL type `t`."""
    mapping: dict[str, pl.DataType] = {
        "TINYINT": pl.Int8(),
        "SMALLINT": pl.Int16(),
        "INT": pl.Int32(),
        "BIGINT": pl.Int64(),
        "FLOAT": pl.Float32(),
        "DOUBLE": pl.Float64(),
        "STRING": pl.String(),
        "BOOLEAN": pl.Boolean(),
        "DATE": pl.Date(),
        "TIMESTAMP": pl.Datetime("us"),
        "NULL": pl.Null(),
    }
    if t.kind == "DECIMAL":
        assert t.precision is not None
        return pl.Decimal(t.precision, t.scale or 0)
    if t.element is not None:
        return pl.List(polars_dtype(t.element))
    return mapping[t.kind]


def schema_of(types: Sequence[SqlType]) -> dict[str, pl.DataType]:
    schema = {col_name(i): polars_dtype(t) for i, t in enumerate(types)}
    schema[WEIGHT] = pl.Int64()
    return schema


@dataclass(frozen=True, slots=True)
class ZSet:
    """A batch of weighted rows with a fixed SQL schema."""

    frame: pl.DataFrame
    types: tuple[SqlType, ...]

    @property
    def columns(self) -> list[str]:
        return [col_name(i) for i in range(len(self.types))]

    def __len__(self) -> int:
        return self.frame.height

    @staticmethod
    def empty(types: Sequence[SqlType]) -> ZSet:
        return ZSet(pl.DataFrame(schema=schema_of(types)), tuple(types))

    @staticmethod
    def from_rows(
        rows: Iterable[Sequence[Any]], types: Sequence[SqlType], weights: Iterable[int] | None = None
    ) -> ZSet:
        """Build a batch from Python rows (tests and scripts; not a hot path)."""
        rows = [tuple(r) for r in rows]
        ws = [1] * len(rows) if weights is None else list(weights)
        data: dict[str, list[Any]] = {col_name(i): [r[i] for r in rows] for i in range(len(types))}
        data[WEIGHT] = ws
        frame = pl.DataFrame(data, schema=schema_of(types), strict=False)
        return ZSet(frame, tuple(types))

    @staticmethod
    def from_frame(frame: pl.DataFrame, types: Sequence[SqlType]) -> ZSet:
        """Adopt a frame whose columns are already c0.. and w, casting to the schema."""
        schema = schema_of(types)
        frame = frame.select([pl.col(name).cast(dtype) for name, dtype in schema.items()])
        return ZSet(frame, tuple(types))

    def consolidate(self) -> ZSet:
        """Merge equal rows by adding their weights and drop zero weights."""
        if self.frame.height == 0:
            return self
        if not self.types:
            total = int(self.frame[WEIGHT].sum())
            frame = pl.DataFrame({WEIGHT: [total]}, schema={WEIGHT: pl.Int64()})
            return ZSet(frame.filter(pl.col(WEIGHT) != 0), self.types)
        frame = (
            self.frame.group_by(self.columns, maintain_order=False)
            .agg(pl.col(WEIGHT).sum())
            .filter(pl.col(WEIGHT) != 0)
        )
        return ZSet(frame, self.types)

    def negate(self) -> ZSet:
        return ZSet(self.frame.with_columns(-pl.col(WEIGHT)), self.types)

    def scale(self, factor: int) -> ZSet:
        return ZSet(self.frame.with_columns(pl.col(WEIGHT) * factor), self.types)

    @staticmethod
    def concat(parts: Sequence[ZSet], types: Sequence[SqlType]) -> ZSet:
        """The sum of batches, unconsolidated."""
        frames = [p.frame for p in parts if p.frame.height]
        if not frames:
            return ZSet.empty(types)
        if len(frames) == 1:
            return ZSet(frames[0], tuple(types))
        return ZSet(pl.concat(frames, how="vertical_relaxed"), tuple(types))

    def is_positive(self) -> bool:
        return self.frame.height == 0 or int(self.frame[WEIGHT].min()) > 0  # type: ignore[arg-type]

    def to_rows(self) -> list[tuple[tuple[Any, ...], int]]:
        """Consolidated (row, weight) pairs in a deterministic order (NULLs first)."""
        z = self.consolidate()
        rows = [(tuple(r[:-1]), int(r[-1])) for r in z.frame.iter_rows()]
        rows.sort(key=lambda rw: (tuple(sort_key(v) for v in rw[0]), rw[1]))
        return rows


def sort_key(value: Any) -> tuple[int, Any]:
    """A total order over SQL values of one column: NULL first, then by value."""
    if value is None:
        return (0, 0)
    if isinstance(value, float) and value != value:  # NaN sorts last, as in Spark
        return (2, 0)
    if isinstance(value, (_dt.date, _dt.datetime, _decimal.Decimal, str, bool, int, float)):
        return (1, value)
    if isinstance(value, list):  # an ARRAY: element by element, a prefix first
        return (1, tuple(sort_key(v) for v in value))
    return (1, str(value))

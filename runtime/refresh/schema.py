"""Source schemas as dbspc sees them: columns with SQL types, from Arrow schemas.

An engine describes each source by an Arrow schema whose types are those `arrow_type`
gives (the Spark engine maps Spark's types first, refusing what dbspc cannot hold;
runtime/spark/spark_types.py). This module maps them to SQL types, generates the
`CREATE TABLE` text dbspc compiles views against, and says what drifted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from dbspc.compiler.errors import InputError
from dbspc.compiler.types import SqlType, array_of, decimal

SUPPORTED_TYPES = (
    "TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, BOOLEAN, DATE, TIMESTAMP, TIMESTAMP_NTZ"
)


@dataclass(frozen=True, slots=True)
class SourceColumn:
    """One data column of a source table, as dbspc sees it."""

    name: str
    type: SqlType


def quote(name: str, dialect: str = "spark") -> str:
    """An identifier quoted for `dialect`, whatever characters it holds."""
    return exp.to_identifier(name, quoted=True).sql(dialect=dialect)


def create_table(table: str, columns: Sequence[SourceColumn], dialect: str = "spark") -> str:
    """The CREATE TABLE statement dbspc compiles views against."""
    body = ", ".join(f"{quote(c.name, dialect)} {c.type.sql()}" for c in columns)
    return f"CREATE TABLE {quote(table, dialect)} ({body});"


def spark_ddl_type(t: SqlType, where: str) -> str:
    """The Spark type of a dbspc column (sinks are read back by Spark with this schema)."""
    if t.kind == "NULL":
        raise InputError(f"{where} has type NULL, which Spark cannot store in parquet; CAST it to a type")
    return t.sql()


def spark_schema(names: Sequence[str], types: Sequence[SqlType], where: str) -> str:
    """A Spark DDL schema string `c0 INT, c1 STRING, ...` for positional columns."""
    return ", ".join(
        f"{n} {spark_ddl_type(t, f'{where} column {i + 1}')}" for i, (n, t) in enumerate(zip(names, types, strict=True))
    )


def arrow_type(t: SqlType) -> pa.DataType:
    """The Arrow type sink files are written with, chosen so that Spark reads each back as
    the dbspc type: TIMESTAMP is UTC-adjusted (Spark's TIMESTAMP), since dbspc holds an
    instant as its naive UTC time, and TIMESTAMP_NTZ is a timestamp of no zone."""
    if t.kind == "DECIMAL":
        assert t.precision is not None
        return pa.decimal128(t.precision, t.scale or 0)
    if t.element is not None:  # a view's collect_list / collect_set: Spark's ARRAY<T>
        return pa.large_list(arrow_type(t.element))
    return _ARROW[t.kind]


# Each simple SQL type and the Arrow type dbspc writes it as.
_ARROW: dict[str, pa.DataType] = {
    "TINYINT": pa.int8(),
    "SMALLINT": pa.int16(),
    "INT": pa.int32(),
    "BIGINT": pa.int64(),
    "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(),
    "STRING": pa.large_string(),
    "BOOLEAN": pa.bool_(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP_NTZ": pa.timestamp("us"),
}


def parse_type(text: str) -> SqlType:
    """The inverse of SqlType.sql() (types kept as text in JSON files)."""
    if text.startswith("DECIMAL(") and text.endswith(")"):
        precision, scale = text[len("DECIMAL(") : -1].split(",")
        return decimal(int(precision), int(scale))
    if text.startswith("ARRAY<") and text.endswith(">"):
        return array_of(parse_type(text[len("ARRAY<") : -1]))
    return SqlType(text)


def describe(columns: Sequence[SourceColumn]) -> list[list[str]]:
    """Columns as JSON-friendly [name, type] pairs (kept in the checkpoint manifest)."""
    return [[c.name, c.type.sql()] for c in columns]


def drift(table: str, source: str, registered: Sequence[SourceColumn], now: Sequence[SourceColumn]) -> str | None:
    """A message naming what changed between two schemas of one source, or None."""
    problems = schema_changes(registered, now)
    if not problems:
        return None
    origin = f"'{table}'" if source == table else f"'{table}' (Spark table '{source}')"
    return f"schema of table {origin} drifted since the views were registered: {'; '.join(problems)}"


def schema_changes(
    registered: Sequence[SourceColumn], now: Sequence[SourceColumn], order: bool = True
) -> list[str]:
    """What differs between two schemas of one source (a changed order only if `order`)."""
    before = {c.name.lower(): c for c in registered}
    after = {c.name.lower(): c for c in now}
    problems: list[str] = []
    missing = [c.name for c in registered if c.name.lower() not in after]
    added = [c.name for c in now if c.name.lower() not in before]
    retyped = [
        f"{c.name} {c.type.sql()} -> {after[c.name.lower()].type.sql()}"
        for c in registered
        if c.name.lower() in after and after[c.name.lower()].type != c.type
    ]
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    if added:
        problems.append(f"new column(s) {', '.join(added)}")
    if retyped:
        problems.append(f"changed type(s) {', '.join(retyped)}")
    if order and not problems and [c.name.lower() for c in registered] != [c.name.lower() for c in now]:
        problems.append(f"column order changed to {', '.join(c.name for c in now)}")
    return problems


# The inverse, where exact; TIMESTAMP is any zoned timestamp, and STRING also pa.string().
_FROM_ARROW: dict[pa.DataType, SqlType] = {a: SqlType(k) for k, a in _ARROW.items() if k != "TIMESTAMP"}
_FROM_ARROW[pa.string()] = SqlType("STRING")


def from_arrow_type(dtype: pa.DataType, table: str, column: str) -> SqlType:
    """The dbspc type of an Arrow column, or an error naming the table and the column."""
    if dtype in _FROM_ARROW:
        return _FROM_ARROW[dtype]
    if pa.types.is_decimal(dtype):
        return decimal(dtype.precision, dtype.scale)
    if pa.types.is_timestamp(dtype):
        # zoned: an instant, held as naive UTC (Spark's TIMESTAMP); naive: a wall clock
        # (Spark writes TIMESTAMP_NTZ so, as parquet's timestamps not adjusted to UTC)
        return SqlType("TIMESTAMP" if dtype.tz is not None else "TIMESTAMP_NTZ")
    raise InputError(
        f"column '{column}' of table '{table}' has type {dtype}, which dbspc does not support; "
        f"supported: {SUPPORTED_TYPES}"
    )


def columns_of(schema: pa.Schema, table: str, exclude: Sequence[str] = ()) -> tuple[SourceColumn, ...]:
    """The data columns of a schema (all but `exclude`, matched case-insensitively)."""
    skip = {e.lower() for e in exclude}
    return tuple(
        SourceColumn(f.name, from_arrow_type(f.type, table, f.name)) for f in schema if f.name.lower() not in skip
    )

"""Table schemas, from DDL or (later) from the Spark catalog."""

from __future__ import annotations

from dataclasses import dataclass, field

from dbspc.compiler.errors import Span, SqlError
from dbspc.compiler.types import SqlType


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: SqlType
    nullable: bool = True


@dataclass(frozen=True, slots=True)
class TableSchema:
    name: str
    columns: tuple[Column, ...]
    # The column names with the case the DDL wrote them in, where that is not lower case
    # (Spark's `SELECT *` shows them so); the names above are lower case.
    shown: tuple[str, ...] = ()

    @property
    def types(self) -> tuple[SqlType, ...]:
        return tuple(c.type for c in self.columns)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


@dataclass
class Catalog:
    """The relations a view may read: base tables and the views defined before it."""

    tables: dict[str, TableSchema] = field(default_factory=dict)

    def add(self, table: TableSchema, span: Span | None = None) -> None:
        if table.name in self.tables:
            raise SqlError(f"relation '{table.name}' is already defined", span)
        self.tables[table.name] = table

    def sqlglot_schema(self) -> dict[str, dict[str, str]]:
        """The mapping sqlglot's qualify and annotate_types expect."""
        return {name: {c.name: c.type.sql() for c in t.columns} for name, t in sorted(self.tables.items())}

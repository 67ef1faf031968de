"""The clauses of a CREATE VIEW statement that dbspc accepts, and the refusal of the rest.

Accepted: `MATERIALIZED` (every dbspc view is maintained), `TEMPORARY`/`TEMP` (a program's
views all live as long as its pipeline), `OR REPLACE`, `IF NOT EXISTS`, a column list
(`v (a, b)` renames the query's columns; a column COMMENT is kept out of the way) and the
view's COMMENT. Refused with their position: GLOBAL TEMPORARY (Spark puts the view in
`global_temp`), TBLPROPERTIES, PARTITIONED BY, WITH SCHEMA ..., typed view columns and
every other property; dropping them silently would publish something else than asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dbspc.compiler.errors import Span, SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import span_of

_HARMLESS = (exp.MaterializedProperty, exp.TemporaryProperty, exp.SchemaCommentProperty)
# refused property -> (what the error calls it, the keyword the parser recorded the position of)
_NAMED: dict[type[exp.Expression], tuple[str, str]] = {
    exp.GlobalProperty: ("GLOBAL TEMPORARY", "GLOBAL"),
    exp.Property: ("TBLPROPERTIES", "TBLPROPERTIES"),
    exp.PartitionedByProperty: ("PARTITIONED BY", "PARTITIONED"),
    exp.WithSchemaBindingProperty: ("WITH SCHEMA", "WITH"),
}


@dataclass(frozen=True)
class ViewHeader:
    """What a CREATE VIEW says besides its query."""

    name: str
    replace: bool
    if_not_exists: bool
    columns: tuple[exp.Expression, ...]  # the column list's entries, for names and positions


def view_header(stmt: exp.Create, dialect: str) -> ViewHeader:
    target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this  # CREATE VIEW v (x, y)
    name = target.name.lower()
    properties = stmt.args.get("properties")
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, _HARMLESS):
            continue
        what, keyword = _NAMED.get(type(prop)) or (prop.sql(dialect) or type(prop).__name__, "")
        where = _clause(stmt, keyword) or span_of(prop) or span_of(stmt)
        raise UnsupportedSql(f"CREATE VIEW ... {what} is not supported", where)
    replace = bool(stmt.args.get("replace"))
    if_not_exists = bool(stmt.args.get("exists"))
    if replace and if_not_exists:  # Spark: INVALID_SQL_SYNTAX (both together)
        raise SqlError("CREATE OR REPLACE VIEW cannot also say IF NOT EXISTS", _clause(stmt, "IF") or span_of(stmt))
    columns = tuple(stmt.this.expressions) if isinstance(stmt.this, exp.Schema) else ()
    for col in columns:
        if isinstance(col, exp.ColumnDef) and col.args.get("kind") is not None:
            raise SqlError(
                f"a view's column list names columns without types ('{col.name} {col.args['kind'].sql(dialect)}')",
                span_of(col.args["kind"]) or span_of(col),
            )
        for constraint in col.args.get("constraints") or [] if isinstance(col, exp.ColumnDef) else []:
            if not isinstance(constraint.args.get("kind"), exp.CommentColumnConstraint):
                raise UnsupportedSql(
                    f"column '{col.name}' of view '{name}': only a COMMENT may follow a column name",
                    span_of(constraint) or span_of(col),
                )
    return ViewHeader(name, replace, if_not_exists, columns)


def _clause(stmt: exp.Create, keyword: str) -> Span | None:
    clauses = (stmt._meta or {}).get("clauses") or {}
    span = clauses.get(keyword)
    return span if isinstance(span, Span) else None

"""CREATE TABLE statements to table schemas, and sqlglot data types to SQL types."""

from __future__ import annotations

from sqlglot import exp

from dbspc.compiler.catalog import Column, TableSchema
from dbspc.compiler.dialect import Semantics
from dbspc.compiler.errors import Span, SqlError, UnsupportedSql
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    TINYINT,
    SqlType,
    decimal,
)

_T = exp.DataType.Type
_SIMPLE: dict[object, SqlType] = {
    _T.TINYINT: TINYINT,
    _T.SMALLINT: SMALLINT,
    _T.INT: INT,
    _T.BIGINT: BIGINT,
    _T.FLOAT: FLOAT,
    _T.DOUBLE: DOUBLE,
    _T.TEXT: STRING,
    _T.VARCHAR: STRING,
    _T.CHAR: STRING,
    _T.NVARCHAR: STRING,
    _T.NCHAR: STRING,
    _T.BOOLEAN: BOOLEAN,
    _T.DATE: DATE,
    _T.TIMESTAMP: TIMESTAMP,
    _T.TIMESTAMPTZ: TIMESTAMP,
    _T.TIMESTAMPNTZ: TIMESTAMP_NTZ,
    _T.DATETIME: TIMESTAMP,
}


def sql_type(dtype: exp.DataType, semantics: Semantics) -> SqlType:
    """Map a parsed type to a SqlType, following the dialect's storage rules."""
    kind = dtype.this
    if kind == _T.DECIMAL:
        params = _integer_parameters(dtype, semantics)
        if not params:
            return decimal(10, 0)  # Spark's default DECIMAL is DECIMAL(10,0)
        return checked_decimal(params[0], params[1] if len(params) > 1 else 0, span_of(dtype))
    if kind in (_T.CHAR, _T.VARCHAR) and dtype.expressions and semantics.store_assignment == "ansi":
        # Spark: VARCHAR(n) checks the length on write; CHAR(n) also pads with spaces.
        n = _integer_parameters(dtype, semantics)[0]
        return SqlType("STRING", length=n, fixed=kind == _T.CHAR)
    if kind in _SIMPLE:
        t = _SIMPLE[kind]
        # SQLite stores every INTEGER as a 64-bit value and every REAL as a double.
        if semantics.sqlite_storage and t.is_integer:
            return BIGINT
        if semantics.sqlite_storage and t == FLOAT:
            return DOUBLE
        return t
    raise UnsupportedSql(f"column type {dtype.sql(semantics.dialect)} is not supported", span_of(dtype))


def checked_decimal(precision: int, scale: int, at: Span | None) -> SqlType:
    """DECIMAL(precision, scale) as written by the user (a type or a literal's digits):
    refused where Spark refuses it, not capped to fit as `decimal` caps computed types."""
    if precision > 38:  # Spark's words (DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)
        raise SqlError(f"decimal precision {precision} exceeds max precision 38", at)
    if scale > precision:
        raise SqlError(f"decimal scale ({scale}) cannot be greater than precision ({precision})", at)
    if precision == 0:  # a type Spark allows, whose only value is 0
        raise UnsupportedSql("DECIMAL(0) is not supported", at)
    return decimal(precision, scale)


def _integer_parameters(dtype: exp.DataType, semantics: Semantics) -> list[int]:
    """DECIMAL(p, s)'s or VARCHAR(n)'s numbers, each a non-negative integer literal."""
    texts = [p.name for p in dtype.expressions]
    if not all(t.isdigit() for t in texts):
        raise SqlError(f"the parameters of {dtype.sql(semantics.dialect)} must be integers", span_of(dtype))
    return [int(t) for t in texts]


_TABLE_CONSTRAINTS = (
    exp.PrimaryKey,
    exp.ForeignKey,
    exp.Constraint,
    exp.UniqueColumnConstraint,
    exp.CheckColumnConstraint,
)


def table_schema(create: exp.Create, semantics: Semantics) -> TableSchema:
    """The schema of one CREATE TABLE statement (names lower-cased, as Spark resolves them)."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise UnsupportedSql("CREATE TABLE ... AS SELECT is not supported; use CREATE VIEW", span_of(create))
    name = schema.this.name.lower()
    columns: list[Column] = []
    seen: set[str] = set()
    for coldef in schema.expressions:
        if isinstance(coldef, _TABLE_CONSTRAINTS):
            continue  # table constraints (PRIMARY KEY (...)) carry no type information
        if not isinstance(coldef, exp.ColumnDef):  # sqlglot reads `(k INT, '')`
            raise SqlError(f"syntax error: {coldef.sql()} is not a column definition (table '{name}')", span_of(coldef))
        cname = coldef.name.lower()
        if cname in seen:
            raise SqlError(f"column '{cname}' appears twice in table '{name}'", span_of(coldef))
        seen.add(cname)
        kind = coldef.args.get("kind")
        if kind is None:
            raise SqlError(f"column '{cname}' of table '{name}' needs a type", span_of(coldef))
        not_null = any(
            isinstance(c.args.get("kind"), (exp.NotNullColumnConstraint, exp.PrimaryKeyColumnConstraint))
            and not (
                isinstance(c.args.get("kind"), exp.NotNullColumnConstraint) and c.args["kind"].args.get("allow_null")
            )
            for c in coldef.args.get("constraints") or []
        )
        columns.append(Column(cname, sql_type(kind, semantics), nullable=not not_null))
    if not columns:
        raise SqlError(f"table '{name}' has no columns", span_of(create))
    written = tuple(c.name for c in schema.expressions if isinstance(c, exp.ColumnDef))
    return TableSchema(name, tuple(columns), written if written != tuple(c.name for c in columns) else ())

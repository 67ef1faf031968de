"""Scripts: a program, then steps of INSERT / DELETE / UPDATE, run through a Pipeline.

    CREATE TABLE t (a INT, b STRING);
    CREATE VIEW v AS SELECT ...;
    -- step
    INSERT INTO t VALUES (1, 'x');
    -- step
    DELETE FROM t WHERE a = 1;

Each `-- step` line starts a step. A step's statements become one Z-set batch per table;
a DELETE or UPDATE sees the rows present at that moment, earlier statements of the same
step included.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl
from sqlglot import exp

from dbspc.compiler.catalog import Column
from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_scalar import ScalarScope, bind_scalar
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.program import parse_statements
from dbspc.compiler.frontend.script_split import split_script
from dbspc.compiler.frontend.type_rules import TypeMismatch, ansi_store_assignable, coerce
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import BOOLEAN, INT, STRING, SqlType
from dbspc.runtime.expressions import evaluate
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet, col_name


@dataclass
class ScriptRun:
    pipeline: Pipeline
    outputs: list[dict[str, ZSet]] = field(default_factory=list)
    # integrated table contents after each step, for the oracles
    tables: list[dict[str, ZSet]] = field(default_factory=list)


def run_script(
    text: str,
    dialect: str = "spark",
    incremental: bool = True,
    keep_tables: bool = False,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> ScriptRun:
    script = split_script(text)
    pipeline = Pipeline.from_sql(script.program, dialect, incremental, max_iterations)
    run = ScriptRun(pipeline)
    for step_text in script.steps:
        changes = step_changes(pipeline, step_text)
        run.outputs.append(pipeline.step(changes))
        if keep_tables:
            run.tables.append({t: pipeline.table_contents(t) for t in pipeline.program.tables})
    return run


def step_changes(pipeline: Pipeline, text: str) -> dict[str, ZSet]:
    """One step's statements as one consolidated change per table."""
    dialect = pipeline.program.dialect
    pending: dict[str, list[ZSet]] = {}
    for stmt in parse_statements(text, dialect):
        if not isinstance(stmt, (exp.Insert, exp.Delete, exp.Update)):
            raise UnsupportedSql(
                f"{_statement_kind(stmt)} is not allowed in a step; a step holds INSERT, DELETE and UPDATE statements",
                span_of(stmt),
            )
        table = _target_table(stmt, pipeline)
        current = lambda t=table: _current(pipeline, t, pending.get(t, []))  # noqa: E731
        if isinstance(stmt, exp.Insert):
            change = _insert(stmt, pipeline, table)
        elif isinstance(stmt, exp.Delete):
            change = _delete(stmt, pipeline, table, current())
        elif isinstance(stmt, exp.Update):
            change = _update(stmt, pipeline, table, current())
        else:
            raise UnsupportedSql("a step holds INSERT, DELETE and UPDATE statements", span_of(stmt))
        pending.setdefault(table, []).append(change)
    return {t: ZSet.concat(parts, pipeline.table_types(t)).consolidate() for t, parts in pending.items()}


def _target_table(stmt: exp.Expression, pipeline: Pipeline) -> str:
    target = stmt.this
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table):
        raise UnsupportedSql(f"cannot change '{stmt.sql()[:40]}'", span_of(stmt))
    name = target.name.lower()
    if name in pipeline.program.views:
        raise SqlError(
            f"cannot {_CHANGE[type(stmt)]} view '{target.name}': a step changes tables, views follow from them",
            span_of(target),
        )
    if name not in pipeline.program.tables:
        raise SqlError(f"table '{target.name}' does not exist", span_of(target))
    return name


_CHANGE: dict[type, str] = {exp.Insert: "INSERT INTO", exp.Delete: "DELETE FROM", exp.Update: "UPDATE"}


def _statement_kind(stmt: exp.Expression) -> str:
    """`CREATE TABLE`, `CREATE VIEW`, `DROP`...: the statement as the user named it."""
    kind = stmt.args.get("kind")
    if isinstance(stmt, exp.Create) and isinstance(kind, str):
        return f"CREATE {kind.upper()}"
    return stmt.key.upper()


def _current(pipeline: Pipeline, table: str, pending: list[ZSet]) -> ZSet:
    now = pipeline.table_contents(table)
    return ZSet.concat([now, *pending], now.types).consolidate()


def _insert(stmt: exp.Insert, pipeline: Pipeline, table: str) -> ZSet:
    schema = pipeline.program.tables[table]
    names = list(schema.names)
    target = stmt.this
    if isinstance(target, exp.Schema) and target.expressions:
        names = [c.name.lower() for c in target.expressions]
        unknown = [n for n in names if n not in schema.names]
        if unknown:
            raise SqlError(f"table '{table}' has no column '{unknown[0]}'", span_of(target))
    values = stmt.expression
    if not isinstance(values, exp.Values):
        raise UnsupportedSql("INSERT takes a VALUES list in scripts", span_of(stmt))
    scope = ScalarScope({}, pipeline.program.semantics, context="VALUES")
    position = {n: i for i, n in enumerate(names)}
    columns: list[list[Scalar]] = [[] for _ in schema.columns]
    for row in values.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(items) != len(names):
            raise SqlError(f"INSERT INTO {table} gives {len(items)} values for {len(names)} columns", span_of(row))
        for j, c in enumerate(schema.columns):
            node = items[position[c.name]] if c.name in position else None
            value = bind_scalar(node, scope) if node is not None else Lit(c.type, None)
            columns[j].append(_stored(value, c, table, node, pipeline))
    return _rows_to_zset(columns, schema.types, f"INSERT INTO {table}", pipeline.program.semantics.eager_operands)


def _stored(value: Scalar, column: Column, table: str, node: exp.Expression | None, pipeline: Pipeline) -> Scalar:
    """`value` converted for storage in `column`, by the dialect's store-assignment rule."""
    if pipeline.program.semantics.store_assignment == "ansi" and not ansi_store_assignable(value.type, column.type):
        raise SqlError(
            f"cannot safely cast {value.type} to {column.type} for column '{column.name}' of table '{table}' "
            f"(Spark's INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST); write a CAST or a typed literal"
            + (" such as DATE '2024-01-31'" if column.type.is_temporal else ""),
            span_of(node),
        )
    stored = _coerced(value, column.type, node)
    if column.type.length is None:
        return stored
    limits = (Lit(INT, column.type.length), Lit(BOOLEAN, column.type.fixed))
    return Call(STRING, "store_char", (stored, *limits))


def _coerced(value: Scalar, t: SqlType, node: exp.Expression | None) -> Scalar:
    try:
        return coerce(value, t)
    except TypeMismatch as e:
        raise SqlError(str(e), span_of(node)) from None


def _rows_to_zset(columns: list[list[Scalar]], types: tuple[SqlType, ...], what: str, eager: bool) -> ZSet:
    n = len(columns[0]) if columns else 0
    frame = pl.DataFrame({"_": [0] * n})
    exprs_by_row = [[columns[j][i] for j in range(len(columns))] for i in range(n)]
    if all(isinstance(e, Lit) for row in exprs_by_row for e in row):
        rows = [[e.value for e in row if isinstance(e, Lit)] for row in exprs_by_row]
        return ZSet.from_rows(rows, types)
    parts = [evaluate(frame.head(1), row, what, eager=eager) for row in exprs_by_row]
    out = pl.concat(parts, how="vertical_relaxed").with_columns(pl.lit(1, pl.Int64).alias(WEIGHT))
    return ZSet.from_frame(out, types)


def _matching(stmt: exp.Expression, pipeline: Pipeline, table: str, current: ZSet) -> pl.DataFrame:
    """The rows of `current` (with weights) the statement's WHERE selects."""
    where = stmt.args.get("where")
    if where is None:
        return current.frame
    scope = _table_scope(pipeline, table)
    pred = bind_scalar(where.this, scope)
    if pred.type.kind not in ("BOOLEAN", "NULL"):
        raise SqlError("WHERE needs a BOOLEAN condition", span_of(where))
    eager = pipeline.program.semantics.eager_operands
    keep = evaluate(current.frame, [pred], f"WHERE of {stmt.key.upper()} on {table}", eager=eager)
    return current.frame.filter(keep[col_name(0)].fill_null(False))


def _table_scope(pipeline: Pipeline, table: str) -> ScalarScope:
    schema = pipeline.program.tables[table]
    cols: dict[tuple[str, str], tuple[int, SqlType]] = {}
    for i, c in enumerate(schema.columns):
        cols[(table, c.name)] = (i, c.type)
        cols[("", c.name)] = (i, c.type)
    return ScalarScope(cols, pipeline.program.semantics, context="WHERE")


def _delete(stmt: exp.Delete, pipeline: Pipeline, table: str, current: ZSet) -> ZSet:
    rows = _matching(stmt, pipeline, table, current)
    return ZSet(rows.with_columns(-pl.col(WEIGHT)), current.types)


def _update(stmt: exp.Update, pipeline: Pipeline, table: str, current: ZSet) -> ZSet:
    """UPDATE = delete the matching rows + insert them with the new values."""
    rows = _matching(stmt, pipeline, table, current)
    schema = pipeline.program.tables[table]
    scope = _table_scope(pipeline, table)
    from dbspc.compiler.logical.scalar import Col

    exprs: list[Scalar] = [Col(c.type, i) for i, c in enumerate(schema.columns)]
    for assignment in stmt.expressions:
        if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
            raise SqlError("syntax error: UPDATE ... SET takes assignments `column = value`", span_of(assignment))
        name = assignment.this.name.lower()
        if name not in schema.names:
            raise SqlError(f"table '{table}' has no column '{name}'", span_of(assignment))
        j = schema.names.index(name)
        exprs[j] = _stored(bind_scalar(assignment.expression, scope), schema.columns[j], table, assignment, pipeline)
    new = evaluate(rows, exprs, f"UPDATE {table}", eager=pipeline.program.semantics.eager_operands)
    deleted = ZSet(rows.with_columns(-pl.col(WEIGHT)), current.types)
    inserted = ZSet.from_frame(new.with_columns(rows[WEIGHT]), current.types)
    return ZSet.concat([deleted, inserted], current.types)

"""Reference engines (the tests, and `dbspc test --update`): recompute every view from scratch.

`duckdb_views` is the fast oracle and `spark_views` the reference one (Spark SQL is the
semantics of the default dialect). Both read a program's tables as they are after some
step (integrated contents, so every weight is positive), run each view's own SQL text in
definition order, and return each view's rows as consolidated `(row, count)` pairs.
`assert_same_rows` compares such multisets across engines, value types being what each
engine returns (Decimal, float, int, date, ...).

Spark vs DuckDB, after sqlglot's transpiling (checked on sqlglot 30.30, duckdb 2.0,
pyspark 4.3):
- `/` on integers is double division in both; `7 div 2` becomes DuckDB's `7 // 2`, which
  truncates toward zero as Spark does (-7 div 2 = -3), and `%` takes the dividend's sign
  in both.
- sqlglot writes Spark's `a / b` as `a / NULLIF(b, 0)` (it models Spark's legacy
  NULL-on-zero) and Spark's CAST as TRY_CAST (legacy NULL-on-bad-input). Spark 4 runs in
  ANSI mode, where both raise, and DuckDB 2.0 raises on division by zero too, so
  `_ansi_for_duckdb` undoes both rewrites: a golden that hits either then fails loudly
  in the oracle instead of agreeing with a wrong NULL.
- `date_add`, `date_sub`, `add_months` and `trunc` become `date + INTERVAL` and
  DATE_TRUNC, TIMESTAMPs in DuckDB; `_dates_for_duckdb` casts them back to DATE, as
  Spark types them.
- Over no rows, ROLLUP / CUBE / GROUPING SETS with a () set give no rows in Spark and a
  grand-total row in DuckDB; `_grand_total_for_duckdb` adds `HAVING COUNT(*) > 0`.
- count_if(p) is 0 in Spark where p is NULL on every row, NULL in DuckDB;
  `_count_if_for_duckdb` writes it as COUNT(NULLIF(p, false)), as Spark defines it.
- `concat(a, b)` becomes `a || b`; both give NULL when an argument is NULL.
- DuckDB 2.0 keeps rows it should drop when a WHERE or HAVING applies LIKE or a regex
  to a CASE of constants (`CASE WHEN c THEN 'a' END RLIKE '^a'` is true where c is
  false); `_filters_for_duckdb` writes each such conjunct as `(p) IS TRUE`, which
  keeps the same rows and which DuckDB gets right.
- AVG of a DECIMAL is a DECIMAL (scale + 4, rounded) in Spark and a DOUBLE in DuckDB;
  `assert_same_rows` therefore compares a Decimal with a float up to the Decimal's
  rounding (half a unit in its last place).
- SUM of integers is BIGINT in Spark and HUGEINT in DuckDB: equal values, different types.
- CAST of a DECIMAL or DOUBLE to an integer type truncates in Spark and rounds in DuckDB;
  `_truncating_casts` adds a TRUNC.
- DuckDB types `smallint_col * 2` as SMALLINT (and overflows at 32000 * 2); Spark widens
  to INT. Goldens keep such products small.
- collect_list / collect_set (Spark) skip NULLs, give [] for no values, and leave the
  order inside the array open; dbspc sorts it ascending. DuckDB's transpiled ARRAY_AGG
  is NULL for no values and unordered, so `_collect_for_duckdb` writes
  COALESCE(LIST_SORT(ARRAY_AGG([DISTINCT] x) FILTER (WHERE x IS NOT NULL [AND c])), []).
- Goldens avoid what still differs: overflow, NaN and -0.0, substring positions <= 0,
  LIKE escapes, casts of doubles to strings, non-ASCII case mapping (upper('ß') is 'SS'
  in Spark and dbspc, 'ẞ' in DuckDB), and the scale of DECIMAL results (compared by
  value here, so a scale difference only shows through rounding).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from dbspc.compiler.types import SqlType
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.script import ScriptRun
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, sort_key

Row = tuple[Any, ...]
Rows = list[tuple[Row, int]]

# -- table contents --------------------------------------------------------------------


def _pipeline(source: ScriptRun | Pipeline) -> Pipeline:
    return source.pipeline if isinstance(source, ScriptRun) else source


def expanded_frame(z: ZSet, names: Sequence[str]) -> pl.DataFrame:
    """The bag a table's Z-set stands for: each row repeated `weight` times, named columns."""
    frame = z.consolidate().frame
    weights = frame[WEIGHT].to_numpy()
    if len(weights) and int(weights.min()) <= 0:
        raise ValueError("a table's contents must have positive weights")
    rows = frame.select(z.columns)[np.repeat(np.arange(frame.height), weights)]
    return rows.rename({col_name(i): n for i, n in enumerate(names)})


def _consolidated(rows: Iterable[Row]) -> Rows:
    counts: Counter[Row] = Counter(tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in rows)
    listed = [(tuple(list(v) if isinstance(v, tuple) else v for v in r), w) for r, w in counts.items()]
    return sorted(listed, key=lambda rw: (tuple(sort_key(v) for v in rw[0]), rw[1]))


def _column_list(pipeline: Pipeline, view: str, quote: Callable[[str], str], name_empty: bool = False) -> str:
    """The view's column names, so views over views see the names dbspc gave them
    (none when they repeat: both engines refuse a view with a repeated name). With
    `name_empty`, a column Spark names '' (an unaliased `''`) gets a placeholder: DuckDB
    refuses an empty identifier, and no query can name the column anyway."""
    names = list(pipeline.view_columns(view))
    if len(set(names)) != len(names):
        return ""
    if name_empty:
        names = [n or f"__dbspc_empty_{i}" for i, n in enumerate(names)]
    return " (" + ", ".join(quote(n) for n in names) + ")"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _dquote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# -- DuckDB ----------------------------------------------------------------------------

_DUCKDB_TYPES = {
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INT": "INTEGER",
    "BIGINT": "BIGINT",
    "FLOAT": "REAL",
    "DOUBLE": "DOUBLE",
    "STRING": "VARCHAR",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP_NTZ": "TIMESTAMP",
}


def duckdb_type(t: SqlType) -> str:
    if t.is_decimal:
        return f"DECIMAL({t.precision},{t.scale})"
    return _DUCKDB_TYPES[t.kind]


def _ansi_for_duckdb(tree: exp.Expr) -> exp.Expr:
    """Undo sqlglot's legacy-Spark rewrites (see the module docstring) for ANSI Spark.

    Spark's parser reads a plain CAST as a TryCast without `safe`, and an explicit
    TRY_CAST as a TryCast with `safe`; only the first becomes a CAST again. In place,
    every node found: a cast inside a cast is undone too (a `transform` that replaced the
    outer one left the inner a TRY_CAST, which made the oracle answer NULL where Spark
    raises: CAST(CAST(n AS INT) AS DECIMAL(5,2)) of an n past INT).
    """
    for node in list(tree.find_all(exp.Div, exp.TryCast)):
        if isinstance(node, exp.Div) and node.args.get("safe"):
            node.set("safe", False)
        elif isinstance(node, exp.TryCast) and not node.args.get("safe"):
            node.replace(exp.Cast(this=node.this, to=node.to))
    return tree


def _dates_for_duckdb(tree: exp.Expression) -> exp.Expression:
    """Spark's date_add / date_sub / add_months / trunc give a DATE; sqlglot writes them
    as `date + INTERVAL` and DATE_TRUNC, which DuckDB types TIMESTAMP, so the oracle
    casts them back (in place, so calls nested in calls are cast too)."""
    for node in list(tree.find_all(exp.TsOrDsAdd, exp.AddMonths, exp.DateTrunc)):
        cast = exp.Cast(to=exp.DataType.build("DATE"))
        node.replace(cast)
        cast.set("this", node)
    return tree


def _filters_for_duckdb(node: exp.Expression) -> exp.Expression:
    """In WHERE and HAVING, each conjunct that matches a pattern against a CASE as
    `(p) IS TRUE` (see the module notes); the others stay as they are, so DuckDB still
    sees its join conditions."""
    if not isinstance(node, (exp.Where, exp.Having)):
        return node
    parts = list(node.this.flatten()) if isinstance(node.this, exp.And) else [node.this]
    if not any(_matches_a_case(p) for p in parts):
        return node
    fixed = [
        exp.Is(this=exp.Paren(this=p.copy()), expression=exp.true()) if _matches_a_case(p) else p.copy() for p in parts
    ]
    return node.__class__(this=exp.and_(*fixed))


def _matches_a_case(p: exp.Expr) -> bool:
    return any(m.find(exp.Case) is not None for m in p.find_all(exp.Like, exp.ILike, exp.RegexpLike))


def _count_if_for_duckdb(node: exp.Expression) -> exp.Expression:
    """Spark's count_if is COUNT(NULLIF(p, false)): 0 when p is never true. DuckDB's
    COUNT_IF is NULL when p is NULL on every row, so the oracle writes Spark's form."""
    if not isinstance(node, exp.CountIf):
        return node
    return exp.Count(this=exp.Nullif(this=node.this.copy(), expression=exp.false()))


def _grand_total_for_duckdb(node: exp.Expression) -> exp.Expression:
    """Over no rows, ROLLUP, CUBE and GROUPING SETS with a () set give no rows in Spark
    (it groups an Expand by the set's id), and DuckDB gives the () set's grand total, as
    PostgreSQL does. `HAVING COUNT(*) > 0` drops only that row: over any rows, every group
    of every set counts at least one. GROUPING SETS (()) alone is a global aggregate in
    both, one row over no rows."""
    group = node.args.get("group") if isinstance(node, exp.Select) else None
    if group is None:
        return node
    sets = [e for e in group.expressions if isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets))]
    only_empty = (
        len(group.expressions) == 1
        and isinstance(group.expressions[0], exp.GroupingSets)
        and all(isinstance(t, exp.Tuple) and not t.expressions for t in group.expressions[0].expressions)
    )
    if not (sets or group.args.get("rollup") or group.args.get("cube")) or only_empty:
        return node
    # set in place: a new node would stop transform() from reaching the queries inside
    nonempty = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
    having = node.args.get("having")
    node.set("having", exp.Having(this=nonempty if having is None else exp.and_(having.this, nonempty)))
    return node


def _collect_for_duckdb(node: exp.Expression) -> exp.Expression:
    """Spark's collect_list / collect_set as DuckDB expressions with Spark's results (see
    the module docstring), the array sorted as dbspc emits it."""
    call, cond = (node.this, node.expression) if isinstance(node, exp.Filter) else (node, None)
    if not isinstance(call, (exp.ArrayAgg, exp.ArrayUniqueAgg)) or (
        isinstance(call, exp.ArrayAgg) and isinstance(node.parent, exp.Filter)
    ):
        return node
    arg = call.this
    distinct = isinstance(call, exp.ArrayUniqueAgg) or isinstance(arg, exp.Distinct)
    value = arg.expressions[0] if isinstance(arg, exp.Distinct) else arg
    keep: exp.Expression = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    if cond is not None:
        keep = exp.and_(  # type: ignore[assignment]
            exp.Paren(this=(cond.this if isinstance(cond, exp.Where) else cond).copy()), keep
        )
    inner = exp.Distinct(expressions=[value.copy()]) if distinct else value.copy()
    agg = exp.Filter(this=exp.Anonymous(this="ARRAY_AGG", expressions=[inner]), expression=exp.Where(this=keep))
    return exp.Coalesce(this=exp.Anonymous(this="LIST_SORT", expressions=[agg]), expressions=[exp.Array()])


def _truncating_casts(tree: exp.Expression, schema: Mapping[str, Mapping[str, str]], dialect: str) -> exp.Expression:
    """Spark's CAST of a DECIMAL or DOUBLE to an integer truncates; DuckDB's rounds.

    Wrap such operands in TRUNC. Finding them needs types, so this qualifies the query
    with sqlglot (dbspc's own front end does too), and only when there is such a cast,
    keeping the oracle's other queries independent of that code.
    """
    t = exp.DataType.Type
    integer_types = {t.TINYINT, t.SMALLINT, t.INT, t.BIGINT}
    casts = [c for c in tree.find_all(exp.Cast) if c.to.this in integer_types]
    if not casts:
        return tree
    catalog: dict[str, object] = dict(schema)
    typed = annotate_types(qualify(tree.copy(), schema=catalog, dialect=dialect), schema=catalog, dialect=dialect)
    for cast in list(typed.find_all(exp.Cast)):
        operand_type = cast.this.type
        if (
            cast.to.this in integer_types
            and operand_type is not None
            and (operand_type.is_type(*exp.DataType.REAL_TYPES))
        ):
            cast.this.replace(exp.func("TRUNC", cast.this.copy()))
    return typed


def duckdb_sql(sql: str, dialect: str, schema: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """A view's query, written for DuckDB with the source dialect's semantics.

    `schema` (table -> column -> type) lets it fix up casts to integers.
    """
    tree = sqlglot.parse_one(sql, read=dialect)
    if dialect in ("spark", "databricks"):
        tree = _ansi_for_duckdb(tree).transform(_collect_for_duckdb)
        tree = _dates_for_duckdb(tree)
        tree = tree.transform(_grand_total_for_duckdb).transform(_count_if_for_duckdb)
        tree = tree.transform(_filters_for_duckdb)
        if schema is not None:
            tree = _truncating_casts(tree, schema, dialect)
    return tree.sql(dialect="duckdb")


def _spark_star_order(con: Any, query: str, names: Sequence[str]) -> str:
    """`query` with its columns in Spark's order: the `*` of a JOIN ... USING or a
    NATURAL JOIN lists the join's columns first in Spark, where DuckDB keeps each side's
    order. Matched by name (the n-th `d` to the n-th `d`); left as it is unless DuckDB's
    names are Spark's in another order."""
    theirs = [d[0].lower() for d in con.execute(f"SELECT * FROM ({query}) LIMIT 0").description]
    names = [n.lower() for n in names]
    if sorted(theirs) == sorted(names) and theirs != names:
        slots: dict[str, list[int]] = {}
        for i, n in enumerate(theirs):
            slots.setdefault(n, []).append(i)
        order = [slots[n].pop(0) for n in names]
        inner = ", ".join(f"__c{i}" for i in range(len(theirs)))
        return f"SELECT {', '.join(f'__c{i}' for i in order)} FROM ({query}) AS __q({inner})"
    return query


def duckdb_views(source: ScriptRun | Pipeline, tables: Mapping[str, ZSet]) -> dict[str, Rows]:
    """Every view of the program, computed by DuckDB from the given table contents."""
    pipeline = _pipeline(source)
    dialect = pipeline.program.dialect
    con = duckdb.connect()
    try:
        for name, schema in pipeline.program.tables.items():
            cols = ", ".join(f"{_dquote(c.name)} {duckdb_type(c.type)}" for c in schema.columns)
            con.execute(f"CREATE TABLE {_dquote(name)} ({cols})")
            z = tables.get(name)
            if z is not None and len(z):
                arrow = expanded_frame(z, schema.names).to_arrow()
                con.register("__dbspc_rows", arrow)
                con.execute(f"INSERT INTO {_dquote(name)} SELECT * FROM __dbspc_rows")
                con.unregister("__dbspc_rows")
        out: dict[str, Rows] = {}
        for name, view in pipeline.program.views.items():
            cols = _column_list(pipeline, name, _dquote, name_empty=True)
            query = duckdb_sql(view.sql, dialect, pipeline.program.catalog.sqlglot_schema())
            written = view.sql.upper()  # (the translation may spell USING out as ON)
            if " USING " in written or " NATURAL " in written:
                query = _spark_star_order(con, query, pipeline.view_columns(name))
            con.execute(f"CREATE VIEW {_dquote(name)}{cols} AS {query}")
            out[name] = _consolidated(con.execute(f"SELECT * FROM {_dquote(name)}").fetchall())
        return out
    finally:
        con.close()


# -- Spark -----------------------------------------------------------------------------


def spark_ddl(pipeline: Pipeline, table: str) -> str:
    """The table's schema as a Spark DDL string (`a INT, b STRING`)."""
    return ", ".join(f"{_quote(c.name)} {c.type.sql()}" for c in pipeline.program.tables[table].columns)


def spark_views(spark: Any, source: ScriptRun | Pipeline, tables: Mapping[str, ZSet]) -> dict[str, Rows]:
    """Every view of the program, computed by Spark SQL from the given table contents.

    Tables become temp views over DataFrames built from Arrow; the views are temp views
    made from their own SQL text, in definition order; results come back through Arrow.
    """
    pipeline = _pipeline(source)
    excluded = spark.conf.get(_EXCLUDED_RULES, "")
    spark.conf.set(_EXCLUDED_RULES, ",".join(r for r in (excluded, _LOCAL_RELATION) if r))
    try:
        return _spark_views(spark, pipeline, tables)
    finally:  # dropped by name (cheap), so they never shadow another test's tables
        spark.conf.set(_EXCLUDED_RULES, excluded)
        for name in [*pipeline.program.tables, *pipeline.program.views]:
            spark.catalog.dropTempView(name)


# Tables built from Arrow are local relations, and Spark's optimizer evaluates a
# projection over one while it plans (ConvertToLocalRelation), before it prunes the
# columns no one reads; a real table's are pruned first. The oracle answers as over
# real tables: a cast that fails in an unread column fails in neither.
_EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
_LOCAL_RELATION = "org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation"


def _utc_instants(table: pa.Table) -> pa.Table:
    """TIMESTAMP columns marked as UTC: dbspc holds instants as UTC times, and Spark reads
    a timestamp without a zone as a wall-clock time in the session's zone."""
    fields = [
        pa.field(f.name, pa.timestamp(f.type.unit, "UTC")) if pa.types.is_timestamp(f.type) and f.type.tz is None else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields)) if fields != list(table.schema) else table


def _spark_views(spark: Any, pipeline: Pipeline, tables: Mapping[str, ZSet]) -> dict[str, Rows]:
    for name, schema in pipeline.program.tables.items():
        z = tables.get(name, ZSet.empty(schema.types))
        arrow = _utc_instants(expanded_frame(z, schema.names).to_arrow())
        spark.createDataFrame(arrow, schema=spark_ddl(pipeline, name)).createOrReplaceTempView(name)
    out: dict[str, Rows] = {}
    for name, view in pipeline.program.views.items():
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {_quote(name)}{_column_list(pipeline, name, _quote)} AS {view.sql}")
        table = spark.table(_quote(name)).toArrow()
        columns = [c.to_pylist() for c in table.columns]
        out[name] = _consolidated(zip(*columns, strict=True) if columns else [])
    return out


# -- comparing -------------------------------------------------------------------------


def _normal(v: Any) -> Any:
    """A hashable value equal across engines for equal SQL values."""
    if isinstance(v, bool):
        return ("bool", v)  # True == 1 == Decimal(1) in Python; SQL keeps them apart
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(v, (list, tuple)):  # an ARRAY, element by element
        return ("array", *(_normal(e) for e in v))
    return v  # int, Decimal and float of equal value are equal and hash alike


def _number(v: Any) -> bool:
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, bool)


def values_close(a: Any, b: Any) -> bool:
    """Equal, or numbers equal up to float rounding (1e-9 relative) or Decimal rounding."""
    a, b = _normal(a), _normal(b)
    if a == b:
        return True
    if not (_number(a) and _number(b)):
        return False
    if not (isinstance(a, float) or isinstance(b, float)):
        return False  # exact numbers compare exactly
    fa, fb = float(a), float(b)
    if math.isinf(fa) or math.isinf(fb):
        return fa == fb
    slack = 1e-9 * max(abs(fa), abs(fb)) + 1e-300
    for d in (a, b):
        if isinstance(d, decimal.Decimal):
            exponent = d.as_tuple().exponent
            if isinstance(exponent, int):
                slack += 0.5 * 10.0**exponent
    return abs(fa - fb) <= slack


def rows_close(a: Row, b: Row) -> bool:
    return len(a) == len(b) and all(values_close(x, y) for x, y in zip(a, b, strict=True))


def _as_rows(rows: ZSet | Sequence[tuple[Row, int]]) -> Rows:
    return rows.to_rows() if isinstance(rows, ZSet) else [(tuple(r), int(w)) for r, w in rows]


def row_differences(
    ours: ZSet | Sequence[tuple[Row, int]], expected: ZSet | Sequence[tuple[Row, int]], exact: bool = False
) -> tuple[Rows, Rows]:
    """(weight only ours has, weight only the expected side has), per row.

    Exactly equal rows cancel first; what is left is paired up by `rows_close` unless
    `exact`.
    """
    balance: dict[Row, int] = {}
    shown: dict[Row, Row] = {}
    for sign, side in ((1, _as_rows(ours)), (-1, _as_rows(expected))):
        for row, w in side:
            key = tuple(_normal(v) for v in row)
            balance[key] = balance.get(key, 0) + sign * w
            shown.setdefault(key, row)
    extra_rows = [shown[k] for k, w in balance.items() if w > 0]
    extra_w = [w for w in balance.values() if w > 0]
    missing_rows = [shown[k] for k, w in balance.items() if w < 0]
    missing_w = [-w for w in balance.values() if w < 0]
    if not exact:
        for i, e in enumerate(extra_rows):
            for j, m in enumerate(missing_rows):
                if extra_w[i] and missing_w[j] and rows_close(e, m):
                    n = min(extra_w[i], missing_w[j])
                    extra_w[i] -= n
                    missing_w[j] -= n
    return (
        [(r, w) for r, w in zip(extra_rows, extra_w, strict=True) if w],
        [(r, w) for r, w in zip(missing_rows, missing_w, strict=True) if w],
    )


def _show(rows: Rows, limit: int = 25) -> str:
    lines = [f"    {r!r} x{w}" for r, w in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"    ... and {len(rows) - limit} more")
    return "\n".join(lines)


def assert_same_rows(
    ours: ZSet | Sequence[tuple[Row, int]],
    expected: ZSet | Sequence[tuple[Row, int]],
    context: str,
    exact: bool = False,
) -> None:
    """The two multisets of rows are equal (numbers up to rounding unless `exact`)."""
    extra, missing = row_differences(ours, expected, exact)
    if extra or missing:
        parts = [f"{context}: rows differ"]
        if extra:
            parts.append(f"  only in dbspc ({len(extra)}):\n{_show(extra)}")
        if missing:
            parts.append(f"  only in the oracle ({len(missing)}):\n{_show(missing)}")
        raise AssertionError("\n".join(parts))

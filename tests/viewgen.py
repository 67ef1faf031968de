"""Random SQL views, typed, over a small schema: the generated-views check.

`program(rng, views)` writes a Spark SQL program: four tables and `views` views, each
drawn from a grammar of what dbspc answers (filters, projections, inner and outer joins,
GROUP BY and HAVING, global aggregates, DISTINCT, set operations, derived tables, IN /
EXISTS / scalar subqueries, window functions and top-k), later views sometimes reading
earlier ones. Every expression is typed as it is drawn, so the views compile unless
dbspc refuses a construct, and the results are functions of the input: windows use
only functions whose value does not depend on how ties are ordered, and a top-k orders
by every column it selects.

The generator keeps to where Spark and DuckDB (the fast oracle) agree: division only by
non-zero literals, no doubles summed (their rounding depends on the order of addition).
Casts that fail on bad input and BIGINT overflow are drawn: a step dbspc rejects must
fail in the oracle too (docs/conformance.md says where Spark's optimizer decides).

Run it alone to soak: `python -m tests.viewgen --seeds 200` checks 200 programs and
prints the first disagreement's program and change stream.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import random
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import duckdb

from dbspc.compiler.compile import Compiled, compile_sql
from dbspc.compiler.errors import RuntimeSqlError, SparkExtension, SqlError, UnsupportedSql
from dbspc.compiler.frontend.program import compile_program
from dbspc.runtime.oracle import assert_same_rows, duckdb_views, spark_ddl, spark_views
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet
from tests.stepcheck import check_step

T = TypeVar("T")

INT, STR, DEC, DATE, BOOL, DOUBLE, TS, ARRAY = "int", "str", "dec", "date", "bool", "double", "ts", "array"
LONG, SHORT = "long", "short"
# compared, grouped and joined on (doubles too: their values are sums of powers of two, so
# exact); an ARRAY (a collect_set) is only selected
KEYS = (INT, STR, DEC, DATE, DOUBLE, TS, BOOL, LONG, SHORT)

SCHEMA = """CREATE TABLE t1 (k INT, v INT, s STRING, d DECIMAL(5,2), dt DATE);
CREATE TABLE t2 (k INT, w INT, s STRING, d DECIMAL(5,2), f DOUBLE);
CREATE TABLE t3 (k INT, s STRING, b BOOLEAN, ts TIMESTAMP);
CREATE TABLE t4 (k INT, n BIGINT, m SMALLINT, e DECIMAL(18,4), s STRING);
"""

TABLES: dict[str, list[tuple[str, str]]] = {
    "t1": [("k", INT), ("v", INT), ("s", STR), ("d", DEC), ("dt", DATE)],
    "t2": [("k", INT), ("w", INT), ("s", STR), ("d", DEC), ("f", DOUBLE)],
    "t3": [("k", INT), ("s", STR), ("b", BOOL), ("ts", TS)],
    "t4": [("k", INT), ("n", LONG), ("m", SHORT), ("e", DEC), ("s", STR)],
}

_LITERALS: dict[str, list[str]] = {
    INT: ["0", "1", "2", "3", "-1", "5"],
    STR: ["'a'", "'b'", "'B'", "''", "'ab'"],
    DEC: ["0.00", "1.50", "-2.25", "10.10"],
    DATE: ["DATE'2024-01-01'", "DATE'2024-02-29'", "DATE'2023-12-31'"],
    DOUBLE: ["0.5D", "2.0D", "-1.25D"],
    TS: ["TIMESTAMP'2024-01-01 10:30:00'", "TIMESTAMP'2024-02-29 00:00:00'"],
    LONG: ["CAST(7 AS BIGINT)", "3000000000", "-1"],
    SHORT: ["CAST(2 AS SMALLINT)", "CAST(-3 AS SMALLINT)"],
}

_TRUNC_UNITS = ["'MONTH'", "'YEAR'"]
_TS_TRUNC_UNITS = ["'DAY'", "'HOUR'", "'MONTH'", "'WEEK'"]
_TS_INTERVALS = ["INTERVAL 1 DAY", "INTERVAL 36 HOURS", "INTERVAL 1 MONTH", "INTERVAL 90 MINUTES"]
_REGEXES = ["'^a'", "'b$'", "'[aB]'", "'^.b?$'"]  # DuckDB knows no 'MM'


@dataclass(frozen=True)
class Column:
    """A column in scope: how to write it, and its type."""

    sql: str
    type: str


@dataclass
class Relation:
    """A FROM clause and the columns it brings into scope."""

    sql: str
    columns: list[Column]


def _named(columns: list[Column]) -> dict[str, str]:
    """Columns in scope by their bare names (`x1.k` -> `k`), and their types."""
    return {c.sql.split(".")[-1]: c.type for c in columns}


@dataclass
class Gen:
    """One program's generator: a random source and the views written so far (name ->
    its column types), which later views may read as tables."""

    rng: random.Random
    spark_only: bool = False  # only what Spark SQL accepts (no UNION in a recursive CTE)
    views: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    aliases: int = 0
    strict: bool = False  # drawing a view's own SELECT list: see cast()

    # -- helpers ---------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: list[T]) -> T:
        return items[self.rng.randrange(len(items))]

    def spark(self, *choices: Callable[[], str]) -> list[Callable[[], str]]:
        """Choices only Spark answers (or only Spark judges): drawn in Spark mode only."""
        return list(choices) if self.spark_only else []

    def alias(self) -> str:
        self.aliases += 1
        return f"x{self.aliases}"

    def literal(self, t: str) -> str:
        if t == BOOL:
            return self.pick(["TRUE", "FALSE"])
        return self.pick(_LITERALS[t])

    # -- expressions -----------------------------------------------------------------

    def expr(self, scope: list[Column], t: str, depth: int = 2) -> str:
        """An expression of type t over the columns in scope."""
        have = [c for c in scope if c.type == t]
        if depth <= 0 or self.chance(0.45):
            if have and self.chance(0.85):
                return self.pick(have).sql
            return self.literal(t)
        d = depth - 1
        choices: dict[str, list[Callable[[], str]]] = {
            INT: [
                lambda: f"({self.expr(scope, INT, d)} {self.pick(['+', '-', '*'])} {self.expr(scope, INT, d)})",
                lambda: f"abs({self.expr(scope, INT, d)})",
                lambda: f"({self.expr(scope, INT, d)} % {self.pick(['2', '3', '-2'])})",
                lambda: f"({self.expr(scope, INT, d)} div {self.pick(['2', '-3'])})",
                lambda: f"length({self.expr(scope, STR, d)})",
                lambda: f"year({self.expr(scope, DATE, d)})",
                lambda: f"CAST({self.expr(scope, DEC, d)} AS INT)",
                lambda: f"greatest({self.expr(scope, INT, d)}, {self.expr(scope, INT, d)})",
                lambda: f"datediff({self.expr(scope, DATE, d)}, {self.expr(scope, DATE, d)})",
                lambda: f"hour({self.expr(scope, TS, d)})",
                lambda: f"{self.pick(['dayofyear', 'weekofyear'])}({self.expr(scope, DATE, d)})",
                lambda: f"CAST({self.expr(scope, BOOL, d)} AS INT)",
                # fails on a string that is no number (Spark's ANSI cast), or not
                lambda: f"{self.cast()}({self.failing(scope, STR)} AS INT)",
                lambda: f"{self.cast()}({self.failing(scope, LONG)} AS INT)",  # past 2^31
                lambda: f"({self.expr(scope, SHORT, d)} * {self.expr(scope, INT, d)})",
                *self.spark(
                    lambda: f"pmod({self.expr(scope, INT, d)}, {self.pick(['3', '-2', '2147483647'])})",
                    lambda: (
                        f"{self.pick(['try_add', 'try_multiply'])}"
                        f"({self.expr(scope, INT, d)}, {self.expr(scope, INT, d)})"
                    ),
                    lambda: (
                        f"{self.pick(['shiftleft', 'shiftright', 'shiftrightunsigned'])}"
                        f"({self.expr(scope, INT, d)}, {self.pick(['1', '4', '31', '33', '-1'])})"
                    ),
                ),
            ],
            LONG: [
                lambda: f"({self.expr(scope, LONG, d)} {self.pick(['+', '-', '*'])} {self.expr(scope, LONG, d)})",
                lambda: f"({self.expr(scope, LONG, d)} + {self.expr(scope, INT, d)})",
                lambda: f"CAST({self.expr(scope, INT, d)} AS BIGINT)",
                lambda: f"abs({self.expr(scope, LONG, d)})",
                lambda: f"({self.expr(scope, LONG, d)} % {self.pick(['2', '7'])})",
                *self.spark(
                    lambda: f"unix_seconds({self.expr(scope, TS, d)})",
                    lambda: f"({self.expr(scope, LONG, d)} {self.pick(['<<', '>>'])} {self.pick(['3', '63', '64'])})",
                ),
            ],
            SHORT: [
                lambda: f"({self.expr(scope, SHORT, d)} + {self.expr(scope, SHORT, d)})",
                lambda: f"CAST({self.expr(scope, INT, d)} AS SMALLINT)",
            ],
            STR: [
                lambda: f"upper({self.expr(scope, STR, d)})",
                lambda: f"concat({self.expr(scope, STR, d)}, {self.expr(scope, STR, d)})",
                lambda: f"substring({self.expr(scope, STR, d)}, 1, {self.pick(['1', '2'])})",
                lambda: f"CAST({self.expr(scope, INT, d)} AS STRING)",
                lambda: f"trim({self.expr(scope, STR, d)})",
                lambda: f"replace({self.expr(scope, STR, d)}, 'a', 'xy')",
                lambda: f"({self.expr(scope, STR, d)} || {self.expr(scope, STR, d)})",
                # (DuckDB's text of a timestamp carries its offset)
                *self.spark(
                    lambda: f"CAST({self.expr(scope, TS, d)} AS STRING)",
                    lambda: f"from_unixtime(CAST({self.expr(scope, INT, d)} AS BIGINT) * 3600)",
                    lambda: (
                        f"regexp_replace({self.expr(scope, STR, d)}, '{self.pick(['a+', '[bc]', 'x?y'])}', '-')"
                    ),
                    lambda: f"substring_index({self.expr(scope, STR, d)}, 'a', {self.pick(['1', '-1', '2'])})",
                    lambda: f"translate({self.expr(scope, STR, d)}, 'ab', 'x')",
                    lambda: f"split_part({self.expr(scope, STR, d)}, 'a', {self.pick(['1', '2', '-1', '3'])})",
                    lambda: f"elt({self.pick(['1', '2'])}, {self.expr(scope, STR, d)}, {self.expr(scope, STR, d)})",
                    lambda: (
                        f"date_format({self.expr(scope, TS, d)}, "
                        f"'{self.pick(['yyyy-MM', 'dd MMM HH:mm', 'EEE'])}')"
                    ),
                ),
            ],
            DEC: [
                lambda: f"({self.expr(scope, DEC, d)} + {self.expr(scope, DEC, d)})",
                lambda: f"({self.expr(scope, DEC, d)} - {self.expr(scope, INT, d)})",
                lambda: f"abs({self.expr(scope, DEC, d)})",
                lambda: f"({self.expr(scope, DEC, d)} * {self.expr(scope, INT, d)})",
                lambda: f"CAST({self.expr(scope, INT, d)} AS DECIMAL(5,2))",
                lambda: f"round({self.expr(scope, DEC, d)}, {self.pick(['0', '1'])})",
                # DECIMAL(38,4): DuckDB's union of it with a scaled DECIMAL drops a digit
                *self.spark(
                    lambda: f"({self.expr(scope, DEC, d)} * {self.expr(scope, LONG, d)})",
                    # scale 18: Spark rounds the exact product to the bounded scale once
                    lambda: f"(CAST({self.expr(scope, DEC, d)} AS DECIMAL(38,18)) * {self.expr(scope, DEC, d)})",
                    lambda: f"try_divide({self.expr(scope, DEC, d)}, {self.expr(scope, INT, d)})",
                    lambda: f"pmod({self.expr(scope, DEC, d)}, {self.pick(['0.7', '3'])})",
                ),
            ],
            DATE: [
                lambda: f"date_add({self.expr(scope, DATE, d)}, {self.expr(scope, INT, 0)})",
                lambda: f"date_sub({self.expr(scope, DATE, d)}, {self.literal(INT)})",
                lambda: f"trunc({self.expr(scope, DATE, d)}, {self.pick(_TRUNC_UNITS)})",
                lambda: f"last_day({self.expr(scope, DATE, d)})",
                lambda: f"to_date({self.expr(scope, TS, d)})",
                *self.spark(
                    lambda: f"make_date(year({self.expr(scope, DATE, d)}), {self.pick(['1', '2'])}, 29)",
                    lambda: f"next_day({self.expr(scope, DATE, d)}, '{self.pick(['Mon', 'friday'])}')",
                ),
            ],
            BOOL: [lambda: f"({self.predicate(scope, d)})"],
            DOUBLE: [
                lambda: f"({self.expr(scope, INT, d)} / {self.pick(['2', '4'])})",
                lambda: f"({self.expr(scope, DOUBLE, d)} * {self.pick(['2', '0.5D'])})",
                lambda: f"({self.expr(scope, DOUBLE, d)} + {self.expr(scope, DOUBLE, d)})",
                lambda: f"floor({self.expr(scope, DOUBLE, d)})",
                lambda: f"sqrt(abs({self.expr(scope, DOUBLE, d)}))",
                lambda: f"({self.expr(scope, DOUBLE, d)} % {self.pick(['3', '0.25D'])})",
                *self.spark(
                    lambda: (
                        f"{self.pick(['ln', 'log10', 'exp', 'sin', 'atan', 'cbrt', 'sign'])}"
                        f"({self.expr(scope, DOUBLE, d)})"
                    ),
                    lambda: f"power({self.expr(scope, DOUBLE, d)}, {self.pick(['2', '0.5D', '-1'])})",
                    lambda: f"try_divide({self.expr(scope, INT, d)}, {self.expr(scope, INT, d)})",
                    lambda: f"pmod({self.expr(scope, DOUBLE, d)}, {self.pick(['2.5D', '-3'])})",
                    lambda: f"months_between({self.expr(scope, TS, d)}, {self.expr(scope, DATE, d)})",
                ),
            ],
            TS: [
                lambda: f"CAST({self.expr(scope, DATE, d)} AS TIMESTAMP)",
                # the wall clock of the session's zone: days and months move it, hours do not
                lambda: f"({self.expr(scope, TS, d)} {self.pick(['+', '-'])} {self.pick(_TS_INTERVALS)})",
                lambda: f"date_trunc({self.pick(_TS_TRUNC_UNITS)}, {self.expr(scope, TS, d)})",
                *self.spark(lambda: f"timestamp_seconds({self.expr(scope, LONG, d)})"),
            ],
        }
        generic = [
            lambda: f"COALESCE({self.expr(scope, t, d)}, {self.literal(t)})",
            lambda: (
                f"CASE WHEN {self.predicate(scope, d)} THEN {self.expr(scope, t, d)} ELSE {self.expr(scope, t, d)} END"
            ),
            lambda: f"CASE WHEN {self.predicate(scope, d)} THEN {self.expr(scope, t, d)} END",
            lambda: f"NULLIF({self.expr(scope, t, d)}, {self.literal(t)})",
            lambda: f"IF({self.predicate(scope, d)}, {self.expr(scope, t, d)}, {self.expr(scope, t, d)})",
        ]
        if t != BOOL:
            generic.append(
                lambda: (
                    f"CASE {self.expr(scope, INT, d)} WHEN {self.literal(INT)} THEN {self.expr(scope, t, d)} "
                    f"WHEN {self.literal(INT)} THEN {self.literal(t)} ELSE {self.expr(scope, t, d)} END"
                )
            )
        return self.pick(choices[t] + generic)()

    def cast(self) -> str:
        """CAST, which fails on a bad value (ANSI), only in a view's own SELECT list:
        Spark drops unread columns before it runs a query, and dbspc keeps those an
        outer join with a residual ON condition reads, so a failing cast deeper down may
        fail in dbspc only (docs/conformance.md)."""
        return self.pick(["CAST", "try_cast"]) if self.strict else "try_cast"

    def failing(self, scope: list[Column], t: str) -> str:
        """A column to cast where the cast may fail: a column, never a constant, as
        Spark's optimizer removes some constant failures (`CAST(3000000000 AS INT) IS
        NOT NULL` fails over one table and is true over a join) and folds others."""
        have = [c for c in scope if c.type == t]
        return self.pick(have).sql if have else "NULL"

    def predicate(self, scope: list[Column], depth: int = 2, subqueries: bool = False) -> str:
        d = depth - 1
        t = self.pick([c.type for c in scope if c.type in KEYS] or [INT])
        simple: list[Callable[[], str]] = [
            lambda: f"{self.expr(scope, t, d)} {self.pick(['=', '<>', '<', '<=', '>', '>='])} {self.expr(scope, t, d)}",
            lambda: f"{self.expr(scope, t, d)} IS {self.pick(['', 'NOT '])}NULL",
            lambda: f"{self.expr(scope, t, d)} {self.pick(['', 'NOT '])}IN ({self.literal(t)}, {self.literal(t)})",
            lambda: f"{self.expr(scope, t, d)} {self.pick(['', 'NOT '])}IN ({self.literal(t)}, NULL)",
        ]
        if t in (INT, DEC, DATE):
            lo, hi = sorted([self.literal(t), self.literal(t)])
            simple.append(lambda: f"{self.expr(scope, t, d)} BETWEEN {lo} AND {hi}")
        if t == STR:
            pattern = self.pick(["'a%'", "'%b'", "'_'"])
            simple.append(lambda: f"{self.expr(scope, STR, d)} LIKE {pattern}")
            regex = self.pick(_REGEXES)
            simple.append(lambda: f"{self.expr(scope, STR, d)} RLIKE {regex}")
        if depth > 0:
            simple += [
                lambda: f"({self.predicate(scope, d)} {self.pick(['AND', 'OR'])} {self.predicate(scope, d)})",
                lambda: f"NOT ({self.predicate(scope, d)})",
            ]
        if subqueries and self.chance(0.35):
            return self.subquery_predicate(scope)
        return self.pick(simple)()

    def subquery_predicate(self, scope: list[Column]) -> str:
        """EXISTS / IN / NOT IN / a comparison with a scalar subquery, often correlated."""
        table = self.pick(["t2", "t3"])
        a = self.alias()
        inner = [Column(f"{a}.{n}", t) for n, t in TABLES[table]]
        outer_int = [c for c in scope if c.type == INT]
        corr = ""
        if outer_int and self.chance(0.7):
            corr = f" WHERE {a}.k = {self.pick(outer_int).sql}"
            if self.chance(0.4):
                corr += f" AND {self.predicate(inner, 1)}"
        elif self.chance(0.5):
            corr = f" WHERE {self.predicate(inner, 1)}"
        kind = self.rng.randrange(4)
        if kind == 0:
            return f"{self.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM {table} {a}{corr})"
        if kind in (1, 2) and outer_int:
            col = self.pick([c for c in inner if c.type == INT])
            neg = "NOT " if kind == 2 else ""
            return f"{self.expr(scope, INT, 1)} {neg}IN (SELECT {col.sql} FROM {table} {a}{corr})"
        agg = self.pick(["COUNT(*)", f"MAX({a}.k)", f"SUM({a}.k)"])
        return f"{self.expr(scope, INT, 1)} {self.pick(['<', '>=', '='])} (SELECT {agg} FROM {table} {a}{corr})"

    # -- FROM ------------------------------------------------------------------------

    def table(self) -> Relation:
        sources = list(TABLES) + list(self.views)
        name = self.pick(sources)
        cols = TABLES.get(name) or self.views[name]
        a = self.alias()
        return Relation(f"{name} {a}", [Column(f"{a}.{n}", t) for n, t in cols])

    def derived(self, depth: int) -> Relation:
        query, types = self.select(depth - 1)
        a = self.alias()
        return Relation(f"({query}) {a}", [Column(f"{a}.c{i}", t) for i, t in enumerate(types)])

    def from_clause(self, depth: int) -> Relation:
        left = self.derived(depth) if depth > 0 and self.chance(0.2) else self.table()
        if not self.chance(0.45):
            return left
        right = self.table()
        kind = self.pick(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"])
        if kind == "CROSS JOIN":
            return Relation(f"{left.sql} CROSS JOIN {right.sql}", left.columns + right.columns)
        pairs = [(a, b) for a in left.columns for b in right.columns if a.type == b.type and a.type in KEYS]
        if not pairs:
            return Relation(f"{left.sql} CROSS JOIN {right.sql}", left.columns + right.columns)
        lefts, rights = _named(left.columns), _named(right.columns)
        common = [n for n in lefts if n in rights]
        same = [n for n in common if lefts[n] == rights[n] and lefts[n] in KEYS]
        if same and self.chance(0.3):
            if same == common and self.chance(0.3):
                return self.using(left, right, kind, common, natural=True)
            return self.using(left, right, kind, [self.pick(same)], natural=False)
        a, b = self.pick(pairs)
        on = f"{a.sql} {self.pick(['=', '=', '<=>'])} {b.sql}"
        if self.chance(0.3):
            on += f" AND {self.predicate(left.columns + right.columns, 1)}"
        if kind == "JOIN" and self.chance(0.25):
            # Spark's LEFT SEMI / LEFT ANTI JOIN: the left side's columns only
            kind = self.pick(["LEFT SEMI JOIN", "LEFT ANTI JOIN"])
            return Relation(f"{left.sql} {kind} {right.sql} ON {on}", left.columns)
        return Relation(f"{left.sql} {kind} {right.sql} ON {on}", left.columns + right.columns)

    def using(self, left: Relation, right: Relation, kind: str, names: list[str], natural: bool) -> Relation:
        """`JOIN ... USING (names)` or NATURAL JOIN: the shared columns also in scope
        unqualified, as the left one, the right one or their COALESCE by the join's side."""
        sql = (
            f"{left.sql} NATURAL {kind} {right.sql}"
            if natural
            else f"{left.sql} {kind} {right.sql} USING ({', '.join(names)})"
        )
        types = _named(left.columns)
        return Relation(sql, [Column(n, types[n]) for n in names] + left.columns + right.columns)

    # -- SELECT ----------------------------------------------------------------------

    def select(self, depth: int = 1, want: list[str] | None = None, top: bool = False) -> tuple[str, list[str]]:
        """A query and its column types (c0, c1, ...); `want` fixes the types (the
        second side of a set operation)."""
        rel = self.from_clause(depth)
        where = f" WHERE {self.predicate(rel.columns, 2, subqueries=True)}" if self.chance(0.5) else ""
        shape = self.rng.randrange(10) if want is None else self.pick([0, 1, 2])
        if shape in (3, 4, 5) and want is None:
            return self.grouped(rel, where, depth)
        types = want or [self.pick([INT, INT, STR, DEC, DATE, DOUBLE, BOOL, TS]) for _ in range(self.rng.randint(1, 3))]
        # not in a set operation's arm: an engine may skip an arm whose other side is empty
        self.strict = top and shape != 8
        items = [f"{self.expr(rel.columns, t)} AS c{i}" for i, t in enumerate(types)]
        self.strict = False
        distinct = "DISTINCT " if shape == 1 else ""
        if shape == 6 and want is None and depth > 0:
            # a correlated scalar subquery in the SELECT list
            t = self.pick(["t2", "t3"])
            a = self.alias()
            ints = [c for c in rel.columns if c.type == INT]
            corr = f" WHERE {a}.k = {self.pick(ints).sql}" if ints else ""
            agg = self.pick(["COUNT(*)", f"MAX({a}.k)", f"MIN({a}.s)"])
            items.append(f"(SELECT {agg} FROM {t} {a}{corr}) AS c{len(types)}")
            types = [*types, STR if "MIN" in agg else INT]
        if shape == 7 and want is None:
            if self.chance(0.5):
                return self.ranked(rel, where)
            return self.windowed(rel, where, types, items)
        query = f"SELECT {distinct}{', '.join(items)} FROM {rel.sql}{where}"
        if shape == 8 and want is None:
            return self.set_operation(query, types, depth)
        if shape == 9 and want is None:
            return self.top_k(query, types), types
        return query, types

    def aggregate(self, scope: list[Column]) -> tuple[str, str]:
        kind = self.rng.randrange(8)
        if kind == 0:
            return self.pick(["COUNT(*)", f"count_if({self.predicate(scope, 1)})"]), INT
        t = self.pick([INT, INT, DEC, STR, DATE, DOUBLE, TS, BOOL])
        arg = self.expr(scope, t, 1)
        if t == BOOL:
            fn = self.pick(["bool_and", "bool_or", "COUNT"])
            return f"{fn}({arg})", INT if fn == "COUNT" else BOOL
        if kind == 1:
            return f"COUNT({arg}) FILTER (WHERE {self.predicate(scope, 1)})", INT
        if kind == 2:
            return f"COUNT(DISTINCT {arg})", INT
        if kind in (3, 4):
            return f"{self.pick(['MIN', 'MAX'])}({arg})", t
        if kind == 7 and self.chance(0.3):
            # sorted: the order inside collect_list's array is open in Spark
            return f"sort_array({self.pick(['collect_set', 'collect_list'])}({arg}))", ARRAY
        if t in (STR, DATE, TS):
            return f"MAX({arg})", t
        if kind == 5:
            where = f" FILTER (WHERE {self.predicate(scope, 1)})" if self.chance(0.3) else ""
            return f"SUM({arg}){where}", t
        if kind == 6:
            return f"SUM(DISTINCT {arg})", t
        return f"AVG({arg})", DEC if t == DEC else DOUBLE

    def grouped(self, rel: Relation, where: str, depth: int) -> tuple[str, list[str]]:
        groups = [self.pick(rel.columns) for _ in range(self.rng.randint(0, 2))]
        if self.chance(0.25):  # GROUP BY an expression (repeated in the SELECT list)
            t = self.pick([INT, STR])
            key = self.expr(rel.columns, t, 1)
            if not key.lstrip("-").isdigit():  # GROUP BY 3 is the third item
                groups.append(Column(key, t))
        groups = [c for i, c in enumerate(groups) if c not in groups[:i] and c.type in KEYS]
        aggs = [self.aggregate(rel.columns) for _ in range(self.rng.randint(1, 3))]
        items = [f"{g.sql} AS c{i}" for i, g in enumerate(groups)]
        items += [f"{a} AS c{len(groups) + i}" for i, (a, _) in enumerate(aggs)]
        types = [g.type for g in groups] + [t for _, t in aggs]
        ranked = [a for a, t in aggs if t in KEYS]
        if groups and ranked and self.chance(0.2):
            # a window over the groups, ordered by an aggregate (RANK: ties rank equal)
            fn = self.pick(["RANK()", "DENSE_RANK()", "SUM(COUNT(*))", "COUNT(*)"])
            part = f"PARTITION BY {groups[0].sql} " if len(groups) > 1 and self.chance(0.5) else ""
            order = f"ORDER BY {self.pick(ranked)} {self.pick(['ASC NULLS FIRST', 'DESC NULLS LAST'])}"
            items.append(f"{fn} OVER ({part}{order if fn.endswith('()') or self.chance(0.5) else ''}) AS c{len(items)}")
            types.append(INT)
        query = f"SELECT {', '.join(items)} FROM {rel.sql}{where}"
        if groups:
            keys = ", ".join(g.sql for g in groups)
            how = self.rng.randrange(8)
            if how == 0:
                query += f" GROUP BY ROLLUP ({keys})"
            elif how == 1:
                query += f" GROUP BY CUBE ({keys})"
            elif how == 2 and len(groups) == 2:
                query += f" GROUP BY GROUPING SETS (({keys}), ({groups[1].sql}), ())"
            else:
                query += f" GROUP BY {keys}"
        if self.chance(0.35):
            a, t = self.aggregate(rel.columns)
            if t in KEYS:
                query += f" HAVING {a} {self.pick(['>', '<=', '<>'])} {self.literal(t)}"
        return query, types

    def windowed(self, rel: Relation, where: str, types: list[str], items: list[str]) -> tuple[str, list[str]]:
        """Window functions whose values do not depend on how ties are ordered."""
        cols = [c for c in rel.columns if c.type in KEYS] or [Column("1", INT)]
        part = [self.pick(cols)] if self.chance(0.7) else []
        order = self.pick(cols)
        over_part = f"PARTITION BY {part[0].sql} " if part else ""
        direction = self.pick(["ASC NULLS FIRST", "DESC NULLS LAST", "ASC NULLS LAST"])
        fn, t = self.pick(
            [
                ("RANK()", INT),
                ("DENSE_RANK()", INT),
                ("COUNT(*)", INT),
                (f"SUM({self.expr(rel.columns, INT, 1)})", INT),
                (f"MIN({self.expr(rel.columns, STR, 1)})", STR),
                ("PERCENT_RANK()", DOUBLE),
                ("CUME_DIST()", DOUBLE),
            ]
        )
        if fn.startswith(("RANK", "DENSE", "PERCENT", "CUME")) or self.chance(0.5):
            over = f"OVER ({over_part}ORDER BY {order.sql} {direction})"
        else:
            over = f"OVER ({over_part.strip()})"
        items = [*items, f"{fn} {over} AS c{len(types)}"]
        return f"SELECT {', '.join(items)} FROM {rel.sql}{where}", [*types, t]

    def ranked(self, rel: Relation, where: str) -> tuple[str, list[str]]:
        """Order-dependent window functions (ROW_NUMBER, LAG, LEAD, a ROWS frame) over
        distinct rows ordered by every column, so no two rows of a partition tie; and
        sometimes the top rows of each partition (a per-group top-k)."""
        types = [self.pick([INT, STR]), self.pick([INT, DEC, DATE]), self.pick([INT, STR])]
        items = ", ".join(f"{self.expr(rel.columns, t)} AS c{i}" for i, t in enumerate(types))
        a = self.alias()
        nulls = ["ASC NULLS FIRST", "DESC NULLS LAST", "ASC NULLS LAST", "DESC NULLS FIRST"]
        over = f"OVER (PARTITION BY {a}.c0 ORDER BY {a}.c1 {self.pick(nulls)}, {a}.c2 {self.pick(nulls)}"
        # LEAD's default is cast to c1's type, which a literal may not fit (Spark fails,
        # DuckDB widens), so it is c1 itself; the literal is drawn still, so that the
        # seeds' later draws stay as they were
        self.literal(types[1])
        fn, t = self.pick(
            [
                ("ROW_NUMBER()", INT),
                (f"LAG({a}.c2)", types[2]),
                (f"LEAD({a}.c1, 1, {a}.c1)", types[1]),
                (f"LAG({a}.c0, 2)", types[0]),
                (f"COUNT({a}.c2)", INT),
                ("NTILE(2)", INT),
                (f"FIRST_VALUE({a}.c2)", types[2]),
                (f"LAST_VALUE({a}.c0) IGNORE NULLS", types[0]),
                (f"NTH_VALUE({a}.c1, 2)", types[1]),
                (f"MAX({a}.c2)", types[2]),
            ]
        )
        frames = {
            "COUNT": " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
            "LAST_VALUE": " ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING",
            "MAX": " ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
        }
        frame = next((f for name, f in frames.items() if fn.startswith(name)), "")
        cols = ", ".join(f"{a}.c{i}" for i in range(3))
        inner = f"SELECT DISTINCT {items} FROM {rel.sql}{where}"
        query = f"SELECT {cols}, {fn} {over}{frame}) AS c3 FROM ({inner}) {a}"
        if self.chance(0.4):
            how = self.rng.randrange(2)
            k = self.rng.randint(1, 2)
            if how == 0:
                query = f"SELECT {cols} FROM ({inner}) {a} QUALIFY ROW_NUMBER() {over}) <= {k}"
            else:
                b = self.alias()
                query = (
                    f"SELECT {b}.c0, {b}.c1, {b}.c2 FROM (SELECT {cols}, ROW_NUMBER() {over}) AS rn "
                    f"FROM ({inner}) {a}) {b} WHERE {b}.rn <= {k}"
                )
            return query, types
        return query, [*types, t]

    def set_operation(self, query: str, types: list[str], depth: int) -> tuple[str, list[str]]:
        other, _ = self.select(depth, want=types)
        op = self.pick(["UNION", "UNION ALL", "EXCEPT", "INTERSECT", "EXCEPT ALL", "INTERSECT ALL"])
        return f"{query} {op} {other}", types

    def top_k(self, query: str, types: list[str]) -> str:
        """ORDER BY every column (tied rows are equal), LIMIT and maybe OFFSET."""
        orders = ["ASC NULLS FIRST", "DESC NULLS LAST", "DESC NULLS FIRST"]
        keys = [f"c{i} {self.pick(orders)}" for i in range(len(types))]
        self.rng.shuffle(keys)
        offset = f" OFFSET {self.rng.randint(1, 2)}" if self.chance(0.3) else ""
        a = self.alias()
        cols = ", ".join(f"{a}.c{i}" for i in range(len(types)))
        return f"SELECT {cols} FROM ({query}) {a} ORDER BY {', '.join(keys)} LIMIT {self.rng.randint(1, 4)}{offset}"

    def recursive(self) -> tuple[str, list[str]]:
        """A recursive CTE over t2's edges k -> w: paths from a filtered start, walked by
        UNION ALL with a depth bound (what Spark SQL accepts) or by UNION (a dbspc
        extension; it ends as the domains are finite), and a query over them."""
        a, e = self.alias(), self.alias()
        start = self.predicate([Column(f"{a}.{n}", t) for n, t in TABLES["t2"]], 1)
        step = f" AND {self.predicate([Column(f'{e}.{n}', t) for n, t in TABLES['t2']], 1)}" if self.chance(0.4) else ""
        if self.spark_only or self.chance(0.5):
            cte = (
                f"WITH RECURSIVE r(src, dst, n) AS (SELECT {a}.k, {a}.w, 0 FROM t2 {a} WHERE {start} "
                f"UNION ALL SELECT r.src, {e}.w, r.n + 1 FROM r JOIN t2 {e} ON r.dst = {e}.k{step} "
                f"WHERE r.n < {self.rng.randint(1, 3)})"
            )
        else:
            cte = (
                f"WITH RECURSIVE r(src, dst) AS (SELECT {a}.k, {a}.w FROM t2 {a} WHERE {start} "
                f"UNION SELECT r.src, {e}.w FROM r JOIN t2 {e} ON r.dst = {e}.k{step})"
            )
        r = Column("r.src", INT), Column("r.dst", INT)
        shape = self.rng.randrange(3)
        if shape == 0:
            return f"{cte} SELECT r.src AS c0, r.dst AS c1 FROM r", [INT, INT]
        if shape == 1:
            agg = self.pick(["COUNT(*)", "MIN(r.dst)", "MAX(r.dst)", "COUNT(DISTINCT r.dst)"])
            return f"{cte} SELECT r.src AS c0, {agg} AS c1 FROM r GROUP BY r.src", [INT, INT]
        x = self.alias()
        return (
            f"{cte} SELECT {self.expr(list(r), INT, 1)} AS c0, {x}.s AS c1 FROM r JOIN t3 {x} ON r.dst = {x}.k",
            [INT, STR],
        )

    def with_cte(self, depth: int) -> tuple[str, list[str]]:
        """A non-recursive WITH, read once or twice."""
        inner, types = self.select(depth)
        a, b = self.alias(), self.alias()
        cols = [Column(f"{a}.c{i}", t) for i, t in enumerate(types)]
        ints = [i for i, t in enumerate(types) if t == INT]
        if ints and self.chance(0.5):
            i = self.pick(ints)
            body = f"SELECT {a}.c{i} AS c0, {b}.c{i} AS c1 FROM w {a} JOIN w {b} ON {a}.c{i} = {b}.c{i}"
            return f"WITH w AS ({inner}) {body}", [INT, INT]
        items = ", ".join(
            f"{cols[i].sql if t == ARRAY else self.expr(cols, t, 1)} AS c{i}" for i, t in enumerate(types)
        )
        return f"WITH w AS ({inner}) SELECT {items} FROM w {a}", types

    def starred(self) -> tuple[str, list[tuple[str, str]]]:
        """`SELECT *` or `SELECT x.*, ...`: the view's columns are named by its sources."""
        rel = self.from_clause(self.rng.randint(0, 1))
        where = f" WHERE {self.predicate(rel.columns, 2)}" if self.chance(0.5) else ""
        names = [c.sql.split(".")[-1] for c in rel.columns]
        if "." not in rel.columns[0].sql:  # a USING join: its keys come first, once
            keys = [c.sql for c in rel.columns if "." not in c.sql]
            names = keys + [n for n in names[len(keys) :] if n not in keys]
            types = _named(rel.columns)
            cols = [(n, types[n]) for n in names]
        else:
            cols = [(c.sql.split(".")[-1], c.type) for c in rel.columns]
        if len(set(names)) == len(names) and self.chance(0.7):
            return f"SELECT * FROM {rel.sql}{where}", cols
        first = rel.columns[-1].sql.split(".")[0]
        mine = [(c.sql.split(".")[-1], c.type) for c in rel.columns if c.sql.startswith(first + ".")]
        extra = self.pick([INT, STR, DEC])
        return (
            f"SELECT {first}.*, {self.expr(rel.columns, extra)} AS extra FROM {rel.sql}{where}",
            [*mine, ("extra", extra)],
        )

    def unaliased(self) -> str:
        """A SELECT list without aliases: Spark names the columns after their text (the
        Spark check compares the names), so no later view reads this one."""
        rel = self.from_clause(self.rng.randint(0, 1))
        if self.chance(0.5):
            groups = [self.pick([c for c in rel.columns if c.type in KEYS])]
            aggs = [self.aggregate(rel.columns)[0] for _ in range(self.rng.randint(1, 2))]
            keys = ", ".join(g.sql for g in groups)
            return f"SELECT {keys}, {', '.join(aggs)} FROM {rel.sql} GROUP BY {keys}"
        types = [self.pick([INT, STR, DEC, DATE, LONG, BOOL]) for _ in range(self.rng.randint(1, 3))]
        items = [self.expr(rel.columns, t) for t in types]
        return f"SELECT {', '.join(items)} FROM {rel.sql}"

    def view(self, name: str) -> str:
        kind = self.rng.randrange(13)
        if kind == 0:
            query, types = self.recursive()
        elif kind == 1:
            query, types = self.with_cte(self.rng.randint(0, 1))
        elif kind == 2:
            query, cols = self.starred()
            self.views[name] = cols
            return f"CREATE VIEW {name} AS {query};"
        elif kind == 3 and self.chance(0.5):
            return f"CREATE VIEW {name} AS {self.unaliased()};"
        else:
            query, types = self.select(depth=self.rng.randint(0, 2), top=True)
        self.views[name] = [(f"c{i}", t) for i, t in enumerate(types)]
        return f"CREATE VIEW {name} AS {query};"


def program(rng: random.Random, views: int, spark_only: bool = False) -> list[str]:
    """`views` CREATE VIEW statements (v0, v1, ...), each after the ones it may read."""
    g = Gen(rng, spark_only)
    return [g.view(f"v{i}") for i in range(views)]


# -- the check ---------------------------------------------------------------------------

_VALUES: dict[str, list[object]] = {
    INT: [None, 0, 1, 2, 3, -1, 7, -10],
    STR: [None, "a", "b", "B", "", "ab", "12", " 3"],
    DEC: [None, decimal.Decimal("0.00"), decimal.Decimal("1.50"), decimal.Decimal("-2.25"), decimal.Decimal("10.10")],
    DATE: [None, datetime.date(2024, 1, 1), datetime.date(2024, 2, 29), datetime.date(2023, 12, 31)],
    DOUBLE: [None, 0.5, -1.25, 2.0, 0.0, 3.75],
    BOOL: [None, True, False],
    TS: [
        None,
        datetime.datetime(2024, 1, 1, 10, 30),
        datetime.datetime(2024, 2, 29),
        datetime.datetime(2023, 12, 31, 23, 59, 59),
    ],
    LONG: [None, 0, 1, -1, 3_000_000_000, 7, -4_000_000_000],
    SHORT: [None, 0, 1, 2, -3, 100],
}

Row = tuple[object, ...]
Step = dict[str, list[tuple[Row, int]]]


def changes(rng: random.Random, steps: int) -> list[Step]:
    """Per step and table: deletes of a random part of the rows present (sometimes all),
    then up to 5 inserts of random rows from small domains, so duplicates, NULLs and
    re-inserts are common."""
    present: dict[str, Counter[Row]] = {t: Counter() for t in TABLES}
    out: list[Step] = []
    for _ in range(steps):
        step: Step = {}
        for table, cols in TABLES.items():
            if rng.random() < 0.25:
                continue
            have = sorted(present[table].elements(), key=repr)
            gone = have if have and rng.random() < 0.15 else [r for r in have if rng.random() < 0.3]
            new = [tuple(rng.choice(_VALUES[t]) for _, t in cols) for _ in range(rng.randint(0, 5))]
            step[table] = [(r, -1) for r in gone] + [(r, 1) for r in new]
            present[table].subtract(gone)
            present[table].update(new)
        out.append(step)
    return out


@dataclass
class Outcome:
    """What one generated program did: the views compiled, those refused (and why)."""

    views: list[str]
    refused: list[tuple[str, str]]


def compile_views(statements: list[str], time_zone: str = "UTC") -> tuple[Compiled, Compiled, Outcome]:
    """Both circuits of the schema and the generated views that dbspc accepts. A view
    refused must be refused with a user-facing, positioned error; any other exception
    (an internal error, a crash) fails the check. A view reading a refused one is
    dropped as well (it names a view that does not exist)."""
    accepted: list[str] = []
    refused: list[tuple[str, str]] = []
    base = compile_program(SCHEMA, "spark")
    for statement in statements:
        name = statement.split()[2]
        if any(f" {r} " in statement for r, _ in refused):
            refused.append((name, "reads a refused view"))
            continue
        try:
            compile_sql(statement, base=base)
        except (UnsupportedSql, SqlError) as e:
            assert e.span is not None, f"{name}: an error without a position: {e}"
            refused.append((name, str(e)))
            continue
        accepted.append(statement)
        base = compile_program(SCHEMA + "\n".join(accepted), "spark")
    text = SCHEMA + "\n".join(accepted)
    full = compile_sql(text, incremental=False, time_zone=time_zone)
    return compile_sql(text, time_zone=time_zone), full, Outcome(accepted, refused)


# With Spark, every fourth program runs in a session time zone other than UTC (the
# views then compute local wall-clock times: compiler/logical/time_zone.py); DuckDB
# knows no session zone, so Spark is then the oracle of every step.
_ZONES = ("America/Los_Angeles", "Asia/Kolkata")


def session_zone(seed: int, spark: Any) -> str:
    return _ZONES[seed // 4 % 2] if spark is not None and seed % 4 == 3 else "UTC"


def check(seed: int, views: int = 4, steps: int = 5, spark: Any = None) -> Outcome:
    """`_check` in the session time zone of `session_zone` (set on Spark's session for
    the check's duration)."""
    zone = session_zone(seed, spark)
    before = spark.conf.get("spark.sql.session.timeZone") if spark is not None else None
    try:
        if spark is not None:
            spark.conf.set("spark.sql.session.timeZone", zone)
        return _check(seed, views, steps, spark, zone)
    except Exception as e:
        # Spark's own internal errors (SQLSTATE XX000, an analyzer bug: a NATURAL FULL
        # self-join grouped by CUBE with a join column in HAVING) leave nothing to judge by
        if spark is not None and "SQLSTATE: XX000" in str(e):
            return Outcome([], [("(program)", f"Spark failed internally: {str(e).splitlines()[0][:200]}")])
        raise
    finally:
        if spark is not None:
            spark.conf.set("spark.sql.session.timeZone", before)


def _check(seed: int, views: int, steps: int, spark: Any, zone: str) -> Outcome:
    """Generate a program from `seed`, run a random change stream through its
    incremental and lifted pipelines, and after every step require: the two pipelines'
    deltas equal, and each view's integrated deltas equal DuckDB's recomputation from
    the integrated tables (Algorithm 4.8). A step that raises a SQL error must raise
    in both pipelines, and the check ends there. With a Spark session, the views
    accept only Spark SQL, and after the last step they also equal Spark's answer."""
    rng = random.Random(seed)
    statements = program(rng, views, spark_only=spark is not None)
    inc_c, full_c, outcome = compile_views(statements, zone)
    if not outcome.views:
        return outcome
    inc, full = Pipeline(inc_c), Pipeline(full_c)
    names = inc.view_names()
    integrated = {v: ZSet.empty(inc.view_types(v)) for v in names}
    stream = changes(rng, steps)
    where = f"seed {seed}{'' if zone == 'UTC' else f' (session time zone {zone})'}:\n" + "\n".join(outcome.views)
    for number, step in enumerate(stream, start=1):
        batch = {t: ZSet.from_rows([r for r, _ in c], inc.table_types(t), [w for _, w in c]) for t, c in step.items()}
        try:
            deltas = inc.step(batch)
        except RuntimeSqlError as e:
            try:
                full.step(batch)
            except RuntimeSqlError:
                _require_raise(inc, batch, spark, f"{where}\nstep {number} of {stream}: dbspc raised {e}")
                return outcome
            raise AssertionError(f"{where}\nstep {number}: only the incremental pipeline raised {e}") from e
        full_deltas = full.step(batch)
        tables = {t: inc.table_contents(t) for t in TABLES}
        try:
            expected = spark_views(spark, inc, tables) if zone != "UTC" else duckdb_views(inc, tables)
        except duckdb.Error as e:
            # DuckDB evaluates some casts eagerly that Spark evaluates only where needed
            # (an aggregate's FILTER, a CASE branch), and lacks some of Spark's functions
            # (timestamp_seconds): with Spark at hand, Spark is the oracle of this step
            if spark is not None:
                expected = spark_views(spark, inc, tables)
            elif isinstance(e, (duckdb.ConversionException, duckdb.OutOfRangeException)):
                return outcome
            else:
                raise AssertionError(f"{where}\nstep {number}: DuckDB refused what dbspc accepted: {e}") from e
        context = f"{where}\nstep {number} of {stream}"
        trial = dict(integrated)
        try:
            check_step(trial, deltas, full_deltas, expected, context)
        except AssertionError:
            if spark is None or zone != "UTC":
                raise
            # DuckDB is the fast oracle where it agrees with Spark; where they differ
            # (DuckDB's DECIMAL(38) union types, say), Spark judges
            trial = dict(integrated)
            check_step(trial, deltas, full_deltas, spark_views(spark, inc, tables), f"{context} (Spark)")
        integrated.update(trial)
    if spark is not None:
        _same_schemas(spark, inc, outcome, where)
        reference = spark_views(spark, inc, {t: inc.table_contents(t) for t in TABLES})
        for view in names:
            assert_same_rows(integrated[view], reference[view], f"{where}\nafter {stream}, view {view}: Spark")
    return outcome


def _require_raise(inc: Pipeline, batch: dict[str, ZSet], spark: Any, where: str) -> None:
    """dbspc rejected a step with a SQL error (an ANSI cast or overflow): the oracle
    must fail on the tables with the step applied as well (the rejected step left
    dbspc's tables as they were)."""
    tables = {t: inc.table_contents(t) for t in TABLES}
    for t, z in batch.items():
        tables[t] = ZSet.concat([tables[t], z], inc.table_types(t)).consolidate()
    try:
        if spark is not None:
            spark_views(spark, inc, tables)
        else:
            duckdb_views(inc, tables)
    except Exception:  # any engine error: what is asserted is that it fails
        return
    raise AssertionError(f"{where}\nbut {'Spark' if spark is not None else 'DuckDB'} answered")


def _same_schemas(spark: Any, inc: Pipeline, outcome: Outcome, where: str) -> None:
    """Each view's column names and types equal those Spark gives the view's own text."""
    for name in inc.program.tables:
        spark.createDataFrame([], spark_ddl(inc, name)).createOrReplaceTempView(name)
    try:
        for statement in outcome.views:
            name = statement.split()[2]
            frame = spark.sql(statement.split(" AS ", 1)[1].rstrip(";"))
            frame.createOrReplaceTempView(name)
            theirs = [(f.name, f.dataType.simpleString()) for f in frame.schema.fields]
            ours = [
                (n, t.sql().lower().replace(" ", ""))
                for n, t in zip(inc.view_columns(name), inc.view_types(name), strict=True)
            ]
            assert ours == theirs, f"{where}\nview {name}: dbspc's columns {ours}, Spark's {theirs}"
    finally:
        for name in [*inc.program.tables, *inc.program.views]:
            spark.catalog.dropTempView(name)


def main() -> None:
    warnings.simplefilter("ignore", SparkExtension)
    parser = argparse.ArgumentParser(description="soak dbspc with generated views")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--views", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--spark", action="store_true", help="also check against Spark SQL (local[2])")
    args = parser.parse_args()
    session = None
    if args.spark:
        from dbspc.runtime.spark.session import local_session

        session = local_session("dbspc-viewgen")
    accepted = refused = 0
    reasons: Counter[str] = Counter()
    for seed in range(args.first, args.first + args.seeds):
        outcome = check(seed, args.views, args.steps, session)
        accepted += len(outcome.views)
        refused += len(outcome.refused)
        reasons.update(r.split(": ", 1)[-1][:90] for _, r in outcome.refused)
    print(f"{args.seeds} programs: {accepted} views checked, {refused} refused")
    for reason, count in reasons.most_common(15):
        print(f"  {count:4d}  {reason}")


if __name__ == "__main__":
    main()

"""SQLite's semantics for a .test file's statements, emulated around dbspc.

The harness keeps the file's database itself: its tables (CREATE TABLE), views
(CREATE VIEW), indexes and triggers, and the tables' contents, kept in a tables-only
`Pipeline` per table (INSERT, UPDATE and DELETE go through `runtime.script.step_changes`;
INSERT OR REPLACE / OR IGNORE and UNIQUE / PRIMARY KEY checks are applied here, as SQLite
applies them). Each query becomes `CREATE VIEW slt_query AS <query>` in a fresh pipeline
over just the tables and views it reads, and the tables' current contents are fed to it
as a stream of three steps (`steps_for`): step 1 inserts the first third of every table,
step 2 inserts the second third and deletes a third of the first, step 3 inserts the rest
and re-inserts the deleted rows.

A `statement error` record that we accept is undone (catalog and data), so the database
stays SQLite's. A failed `statement ok` blocks later queries over the tables it left
unlike SQLite's (`Blocked`).
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import sqlglot
from sqlglot import exp

from dbspc.compiler.deep_stack import deep
from dbspc.compiler.errors import DbspcError, SqlError, UnsupportedSql
from dbspc.compiler.frontend.program import Program, compile_program
from dbspc.compiler.types import SqlType
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.script import step_changes
from dbspc.runtime.zset import WEIGHT, ZSet
from dbspc.slt.incremental import IntermediateTooLarge, Limits, WrongResult, run_view

DIALECT = "sqlite"
# Bound schemas kept per file (Database._programs); past this many the cache starts over.
_PROGRAMS_KEPT = 64
QUERY_VIEW = "slt_query"
STEPS = 3
ROOT = Path(__file__).resolve().parent.parent


class Blocked(Exception):
    """A query or statement reads a table that an earlier failure left unlike SQLite's."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind  # "unsupported" or "error"
        self.reason = reason


class Reject(SqlError):
    """A statement SQLite rejects that dbspc has no opinion on (catalog, constraints)."""


@dataclass
class _Relation:
    name: str
    ddl: str
    refs: frozenset[str] = frozenset()  # relations a view reads
    keys: tuple[tuple[int, ...], ...] = ()  # UNIQUE / PRIMARY KEY column sets of a table


@contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def parse_sql(sql: str) -> list[exp.Expr]:
    with _quiet_sqlglot():
        try:
            return [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
        except sqlglot.errors.SqlglotError as e:
            raise SqlError(f"syntax error: {str(e).splitlines()[0]}") from None


def _references(tree: exp.Expr) -> set[str]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {t.name.lower() for t in tree.find_all(exp.Table) if t.name and t.name.lower() not in ctes}


def _key_sets(create: exp.Create) -> tuple[tuple[int, ...], ...]:
    schema = create.this
    if not isinstance(schema, exp.Schema):
        return ()
    names = [c.name.lower() for c in schema.expressions if isinstance(c, exp.ColumnDef)]
    keys: list[tuple[int, ...]] = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            for c in item.args.get("constraints") or []:
                if isinstance(c.args.get("kind"), (exp.PrimaryKeyColumnConstraint, exp.UniqueColumnConstraint)):
                    keys.append((names.index(item.name.lower()),))
        elif isinstance(item, (exp.PrimaryKey, exp.UniqueColumnConstraint)):
            cols = item.expressions if isinstance(item, exp.PrimaryKey) else getattr(item.this, "expressions", [])
            idx = tuple(names.index(c.name.lower()) for c in cols if c.name.lower() in names)
            if idx:
                keys.append(idx)
    return tuple(dict.fromkeys(keys))


_TRIGGER = re.compile(
    r"^\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TRIGGER\s+(IF\s+NOT\s+EXISTS\s+)?(\w+)\b.*?\bON\s+(\w+)\b(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_REINDEX = re.compile(r"^\s*REINDEX\b\s*(\w*)\s*;?\s*$", re.IGNORECASE)
_REPLACE = re.compile(r"^\s*REPLACE\s+INTO\b", re.IGNORECASE)
# INSERT ... VALUES (not ... SELECT, which reads other tables and must see them as they are)
PLAIN_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)\s*(\([^)]*\))?\s*VALUES\b", re.IGNORECASE)
_WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


class Database:
    """The tables, views and contents of one .test file, as SQLite would hold them."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.tables: dict[str, _Relation] = {}
        self.views: dict[str, _Relation] = {}
        self.indexes: dict[str, str] = {}  # index -> table
        self.triggers: dict[str, str] = {}  # trigger -> table
        # relations whose definition or contents we could not follow: name -> (kind, reason)
        self.blocked: dict[str, tuple[str, str]] = {}
        # one tables-only pipeline per table holds its contents
        self.stores: dict[str, Pipeline] = {}
        self.versions: dict[str, int] = {}
        self._splits: dict[str, tuple[int, list[ZSet]]] = {}
        # the tables and views a query reads, bound once by their DDL: a file's queries
        # read a few schemas, and re-parsing them was a fifth of a query's compile time
        self._programs: dict[tuple[str, ...], Program] = {}

    # -- statements ------------------------------------------------------------------------

    def execute(self, sql: str, expect_error: bool = False) -> None:
        """Apply one statement record; raises on failure. What SQLite rejects (`expect_error`) but
        we accept is undone, so that the catalog and the data stay SQLite's."""
        if not expect_error:
            self._execute(sql, expect_error)
            return
        tables, views, stores = dict(self.tables), dict(self.views), dict(self.stores)
        indexes, triggers, blocked = dict(self.indexes), dict(self.triggers), dict(self.blocked)
        self._execute(sql, expect_error)
        self.tables, self.views, self.stores = tables, views, stores
        self.indexes, self.triggers, self.blocked = indexes, triggers, blocked

    def _execute(self, sql: str, expect_error: bool) -> None:
        m = _TRIGGER.match(sql)
        if m:
            return self._create_trigger(m)
        m = _REINDEX.match(sql)
        if m:
            name = m.group(1).lower()
            if name and name not in self.indexes and name not in self.tables:
                raise Reject(f"no such index or table: {name}")
            return None
        if _REPLACE.match(sql):
            sql = _REPLACE.sub("INSERT OR REPLACE INTO", sql, count=1)
        statements = parse_sql(sql)
        for stmt in statements:
            text = sql.strip().rstrip(";") if len(statements) == 1 else stmt.sql(DIALECT)
            self._statement(stmt, text, expect_error)
        return None

    def _statement(self, stmt: exp.Expr, text: str, expect_error: bool) -> None:
        kind = (stmt.args.get("kind") or "").upper() if isinstance(stmt, (exp.Create, exp.Drop)) else ""
        if isinstance(stmt, exp.Create) and kind == "TABLE":
            self._create_table(stmt, text, expect_error)
        elif isinstance(stmt, exp.Create) and kind == "VIEW":
            self._create_view(stmt, text, expect_error)
        elif isinstance(stmt, exp.Create) and kind == "INDEX":
            self._create_index(stmt)
        elif isinstance(stmt, exp.Drop):
            self._drop(stmt, kind)
        elif isinstance(stmt, (exp.Insert, exp.Update, exp.Delete)):
            self._change(stmt, text, expect_error)
        elif isinstance(stmt, exp.Query):
            self.query_rows(text)
        else:
            raise UnsupportedSql(f"statement {type(stmt).__name__.upper()} is not supported by the harness")

    def _exists(self, name: str) -> bool:
        return name in self.tables or name in self.views or name in self.blocked

    def _create_table(self, stmt: exp.Create, text: str, expect_error: bool) -> None:
        name = stmt.this.this.name.lower() if isinstance(stmt.this, exp.Schema) else stmt.this.name.lower()
        if self._exists(name):
            if stmt.args.get("exists"):
                return
            raise Reject(f"table {name} already exists")
        try:
            store = Pipeline.from_sql(text, DIALECT)  # refuses what dbspc cannot hold
        except Exception as e:
            if not expect_error:
                self.blocked[name] = (kind_of(e), f"CREATE TABLE {name}: {reason_of(e)}")
            raise
        self.tables[name] = _Relation(name, text, keys=_key_sets(stmt))
        self.stores[name] = store
        self.versions[name] = self.versions.get(name, 0) + 1

    def _create_view(self, stmt: exp.Create, text: str, expect_error: bool) -> None:
        name = stmt.this.this.name.lower() if isinstance(stmt.this, exp.Schema) else stmt.this.name.lower()
        if self._exists(name):
            if stmt.args.get("exists"):
                return
            raise Reject(f"view {name} already exists")
        query = stmt.expression
        refs = frozenset(_references(query)) if query is not None else frozenset()
        view = _Relation(name, text, refs=refs)
        try:
            self._check_blocked(refs)
            self._pipeline([view])
        except Blocked as b:
            self.blocked[name] = (b.kind, b.reason)
            raise
        except Exception as e:
            if not expect_error:  # SQLite has the view: queries over it cannot run here
                self.blocked[name] = (kind_of(e), f"view {name}: {reason_of(e)}")
            raise
        self.views[name] = view

    def _create_index(self, stmt: exp.Create) -> None:
        index = stmt.this
        name = index.name.lower()
        table = index.args.get("table")
        table_name = table.name.lower() if isinstance(table, exp.Table) else ""
        if name in self.indexes:
            if stmt.args.get("exists"):
                return
            raise Reject(f"index {name} already exists")
        if table_name not in self.tables and table_name not in self.blocked:
            raise Reject(f"no such table: {table_name}")
        self.indexes[name] = table_name

    def _create_trigger(self, m: re.Match[str]) -> None:
        name, table, body = m.group(2).lower(), m.group(3).lower(), m.group(4)
        if name in self.triggers:
            if m.group(1):
                return
            raise Reject(f"trigger {name} already exists")
        if table not in self.tables and table not in self.views and table not in self.blocked:
            raise Reject(f"no such table: {table}")
        self.triggers[name] = table
        if _WRITES.search(body):
            # the trigger changes data on every write to its table: we cannot follow
            self.blocked.setdefault(table, ("unsupported", f"triggers that write ({name} on {table})"))

    def _drop(self, stmt: exp.Drop, kind: str) -> None:
        targets = stmt.args.get("tables") or ([stmt.this] if stmt.this is not None else [])
        for target in targets:
            self._drop_one(target.name.lower(), kind, bool(stmt.args.get("exists")))

    def _drop_one(self, name: str, kind: str, if_exists: bool) -> None:
        if kind == "INDEX":
            if self.indexes.pop(name, None) is None and not if_exists:
                raise Reject(f"no such index: {name}")
            return
        if kind == "TRIGGER":
            if self.triggers.pop(name, None) is None and not if_exists:
                raise Reject(f"no such trigger: {name}")
            return
        if kind not in ("TABLE", "VIEW"):
            raise UnsupportedSql(f"DROP {kind} is not supported by the harness")
        own = self.tables if kind == "TABLE" else self.views
        other = self.views if kind == "TABLE" else self.tables
        if name in other:
            raise Reject(f"use DROP {'VIEW' if kind == 'TABLE' else 'TABLE'} to delete {name}")
        if name not in own and name not in self.blocked:
            if if_exists:
                return
            raise Reject(f"no such {kind.lower()}: {name}")
        own.pop(name, None)
        self.blocked.pop(name, None)
        if kind == "TABLE":
            self.indexes = {i: t for i, t in self.indexes.items() if t != name}
            self.triggers = {i: t for i, t in self.triggers.items() if t != name}
            self.stores.pop(name, None)

    # -- INSERT / UPDATE / DELETE ----------------------------------------------------------

    def _change(self, stmt: exp.Expr, text: str, expect_error: bool) -> None:
        target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
        table = target.name.lower() if isinstance(target, exp.Table) else ""
        if table in self.views:
            raise Reject(f"cannot modify {table} because it is a view")
        if table in self.blocked:
            kind, reason = self.blocked[table]
            raise Blocked(kind, reason)
        if table not in self.stores:
            raise Reject(f"no such table: {table}")
        store = self.stores[table]
        alternative = (stmt.args.get("alternative") or "").upper() if isinstance(stmt, exp.Insert) else ""
        if alternative:
            plain = stmt.copy()
            plain.set("alternative", None)
            text = plain.sql(DIALECT)
        try:
            if alternative not in ("", "REPLACE", "IGNORE"):
                raise UnsupportedSql(f"INSERT OR {alternative} is not supported by the harness")
            if isinstance(stmt, exp.Insert) and isinstance(stmt.expression, exp.Query):
                change = self._insert_select(stmt, table)
            else:
                found = step_changes(store, text).get(table)
                if found is None:
                    return
                change = found
            change = self._apply_keys(table, change, alternative)
            store.step({table: change})
        except Exception as e:
            if not expect_error:
                self.blocked[table] = (kind_of(e), f"{text.split(None, 1)[0].upper()} into {table}: {reason_of(e)}")
            raise
        if expect_error:
            store.step({table: change.negate()})  # SQLite rejects it: keep SQLite's data
        else:
            self.versions[table] = self.versions.get(table, 0) + 1

    def _insert_select(self, stmt: exp.Insert, table: str) -> ZSet:
        """INSERT ... SELECT: the query's rows, computed as a view of the current contents."""
        store = self.stores[table]
        columns = list(store.table_columns(table))
        types = store.table_types(table)
        names = columns
        if isinstance(stmt.this, exp.Schema) and stmt.this.expressions:
            names = [c.name.lower() for c in stmt.this.expressions]
        unknown = [n for n in names if n not in columns]
        if unknown:
            raise Reject(f"table {table} has no column named {unknown[0]}")
        query = stmt.expression
        assert query is not None
        rows, got = self.query_rows(query.sql(DIALECT))
        if len(got) != len(names):
            raise Reject(f"{len(names)} columns but the query gives {len(got)} values")
        where = {n: k for k, n in enumerate(names)}
        for n, t in zip(names, got, strict=True):
            want = types[columns.index(n)]
            if t != want and t.kind != "NULL":
                raise UnsupportedSql(f"INSERT ... SELECT of {t.sql()} into a {want.sql()} column")
        full = [tuple(r[where[c]] if c in where else None for c in columns) for r in rows]
        return ZSet.from_rows(full, types).consolidate()

    def insert_batch(self, table: str, texts: list[str]) -> bool:
        """Consecutive plain INSERTs into one table as one change; False (and no change) on any failure."""
        store = self.stores.get(table)
        if store is None or table in self.blocked or table in self.views:
            return False
        try:
            change = step_changes(store, ";\n".join(texts)).get(table)
            if change is None:
                return True
            store.step({table: self._apply_keys(table, change, "")})
        except Exception:  # the caller replays the statements one by one
            return False
        self.versions[table] = self.versions.get(table, 0) + 1
        return True

    def _apply_keys(self, table: str, change: ZSet, alternative: str) -> ZSet:
        """SQLite's UNIQUE / PRIMARY KEY rules: reject, replace or ignore conflicting rows."""
        keys = self.tables[table].keys
        if not keys:
            return change
        store = self.stores[table]
        current = [row for row, w in store.table_contents(table).to_rows() for _ in range(w)]
        changed = change.to_rows()
        removed = [row for row, w in changed if w < 0 for _ in range(-w)]
        added = [row for row, w in changed if w > 0 for _ in range(w)]
        survivors = list(current)
        for row in removed:
            survivors.remove(row)

        def key(row: tuple[Any, ...], k: tuple[int, ...]) -> tuple[Any, ...] | None:
            values = tuple(row[i] for i in k)
            return None if any(v is None for v in values) else values

        taken = {k: {key(r, k) for r in survivors} - {None} for k in keys}
        extra_deletes: list[tuple[Any, ...]] = []
        inserted: list[tuple[Any, ...]] = []
        for row in added:
            clash = [k for k in keys if key(row, k) is not None and key(row, k) in taken[k]]
            if clash and alternative == "IGNORE":
                continue
            if clash and alternative == "REPLACE":
                gone = [r for r in survivors if any(key(r, k) == key(row, k) for k in clash)]
                for r in gone:
                    survivors.remove(r)
                    if r in inserted:
                        inserted.remove(r)
                    else:
                        extra_deletes.append(r)
                taken = {k: {key(r, k) for r in survivors} - {None} for k in keys}
            elif clash:
                cols = ", ".join(store.table_columns(table)[i] for i in clash[0])
                raise Reject(f"UNIQUE constraint failed: {table}.{cols}")
            survivors.append(row)
            inserted.append(row)
            for k in keys:
                kv = key(row, k)
                if kv is not None:
                    taken[k].add(kv)
        rows = [*removed, *extra_deletes, *inserted]
        weights = [-1] * (len(removed) + len(extra_deletes)) + [1] * len(inserted)
        return ZSet.from_rows(rows, change.types, weights).consolidate()

    def lose(self, sql: str, reason: str) -> None:
        """A statement whose process died (a crash, or a timeout twice over): block what it
        writes, for its effect on it is unknown. One whose target cannot be read blocks
        every table and view."""
        names: set[str] = set()
        m = PLAIN_INSERT.match(sql)  # (a lost batch's every insert comes here: no parse for them)
        if m:
            names.add(m.group(1).lower())
        else:
            try:
                statements = parse_sql(sql)
            except Exception:
                statements = []
            for stmt in statements:
                targets = stmt.args.get("tables") or ([stmt.this] if isinstance(stmt.this, exp.Expr) else [])
                for target in targets:
                    table = target.find(exp.Table) if isinstance(target, exp.Expr) else None
                    if table is not None and table.name:
                        names.add(table.name.lower())
            if not names:
                names = {*self.tables, *self.views}
        for name in names:
            self.blocked.setdefault(name, ("error", f"an earlier statement did not finish ({reason})"))

    # -- queries ---------------------------------------------------------------------------

    def _check_blocked(self, refs: frozenset[str] | set[str]) -> None:
        for name in sorted(self._closure(refs)):
            if name in self.blocked:
                kind, reason = self.blocked[name]
                raise Blocked(kind, f"blocked: {reason}")

    def _closure(self, refs: frozenset[str] | set[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(refs)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self.views:
                stack.extend(self.views[name].refs)
        return seen

    def _pipeline(self, last: list[_Relation], refs: frozenset[str] | set[str] | None = None) -> Pipeline:
        """A pipeline over the tables and views `last` reads, then `last` itself."""
        wanted = self._closure(refs if refs is not None else frozenset().union(*(r.refs for r in last)))
        relations = [*self.tables.items(), *self.views.items()]
        ddl = tuple(r.ddl for n, r in relations if n in wanted)
        base = self._programs.get(ddl)
        if base is None:
            base = deep(lambda: compile_program(";\n".join(ddl), DIALECT))
            if len(self._programs) >= _PROGRAMS_KEPT:
                self._programs.clear()
            self._programs[ddl] = base
        return Pipeline.from_sql(";\n".join(r.ddl for r in last), DIALECT, base=base)

    def steps_for(self, tables: Sequence[str]) -> list[dict[str, ZSet]]:
        """The tables' contents as STEPS changes: inserts, deletes and re-inserts."""
        steps: list[dict[str, ZSet]] = [{} for _ in range(STEPS)]
        for name in tables:
            for i, z in enumerate(self._split(name)):
                if len(z):
                    steps[i][name] = z
        return steps

    def _split(self, table: str) -> list[ZSet]:
        version = self.versions.get(table, 0)
        cached = self._splits.get(table)
        if cached is not None and cached[0] == version:
            return cached[1]
        z = self.stores[table].table_contents(table).consolidate()
        n = len(z)
        a, b = -(-n // 3), -(-2 * n // 3)
        first, second, third = z.frame.slice(0, a), z.frame.slice(a, b - a), z.frame.slice(b)
        gone = first.slice(0, -(-first.height // 3))
        parts = [
            ZSet(first, z.types),
            ZSet(pl.concat([second, gone.with_columns(-pl.col(WEIGHT))]), z.types),
            ZSet(pl.concat([third, gone]), z.types),
        ]
        self._splits[table] = (version, parts)
        return parts

    def query_rows(self, sql: str) -> tuple[list[tuple[Any, ...]], tuple[SqlType, ...]]:
        """The rows (with duplicates) of `sql` as an incremental view fed in steps."""
        # the relations it names (a word match, so without a second parse of the query)
        words = set(re.findall(r"[a-z_][a-z0-9_]*", sql.lower()))
        refs = {n for n in (*self.tables, *self.views, *self.blocked) if n in words}
        self._check_blocked(refs)
        pipeline = self._pipeline([_Relation(QUERY_VIEW, f"CREATE VIEW {QUERY_VIEW} AS {sql}")], refs)
        return run_view(pipeline, QUERY_VIEW, self.steps_for(list(pipeline.program.tables)), self.limits)


def kind_of(e: BaseException) -> str:
    """How a failure counts: "unsupported" (dbspc refuses the SQL) or "error"."""
    return "unsupported" if isinstance(e, UnsupportedSql) else "error"


def reason_of(e: BaseException) -> str:
    """A failure's message for the report, one line."""
    message = e.message if isinstance(e, DbspcError) else str(e)
    message = " ".join(message.split())
    if not isinstance(e, DbspcError) or isinstance(e, Reject):
        message = f"{type(e).__name__}: {message}"
    return message[:160] + _origin(e)


def _origin(e: BaseException) -> str:
    """Where an internal error (not a DbspcError) was raised in dbspc's code, for the report."""
    if isinstance(e, (DbspcError, IntermediateTooLarge, WrongResult)):
        return ""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        path = Path(frame.filename)
        if path.is_relative_to(ROOT) and ".venv" not in path.parts:
            where = path.relative_to(ROOT)
            if where.parts[0] != "slt":  # the harness's own frames say nothing about dbspc
                return f" [{where}:{frame.lineno}]"
    return ""

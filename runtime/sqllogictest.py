"""Run sqllogictest files against dbspc, every query as an incremental view.

A `.test` file is a sequence of records separated by blank lines:

    statement ok|error         then the SQL
    query <types> <sort> [label]   then the SQL, `----`, and the expected values
    hash-threshold N
    halt

preceded by optional `onlyif <db>` / `skipif <db>` lines; `#` starts a comment line.

How a file runs (the incremental model)
---------------------------------------
The harness keeps the file's database itself: its tables (CREATE TABLE), views
(CREATE VIEW), and the tables' contents, kept in a tables-only `Pipeline` (INSERT,
UPDATE and DELETE go through `runtime.script.step_changes`; INSERT OR REPLACE / OR
IGNORE and UNIQUE / PRIMARY KEY checks are emulated here, as SQLite applies them).
Each query becomes `CREATE VIEW slt_query AS <query>` in a fresh pipeline over just the
tables and views it reads, and the tables' current contents are fed to it as a stream of
three steps: step 1 inserts the first third of every table, step 2 inserts the second
third and deletes a third of the first, step 3 inserts the rest and re-inserts the
deleted rows. The sum of the view's output deltas is its content; it is formatted like
SQLite's reference harness and compared with the expected values.

Conditions: we are the database "dbspc". Expected results follow SQLite semantics, but
a record `onlyif sqlite` tests a SQLite-only extension (`x IN ()`, `x IN table`, TEMP
views), so we skip it; `skipif sqlite` marks a record whose expected result is not
SQLite's, so we skip it too. `onlyif X` for any X but dbspc skips; `skipif dbspc` skips.

Outcomes per query: passed; wrong (a result that differs from the expected one, the
number that must stay 0); unsupported (`UnsupportedSql`, counted per message); error
(any other exception). A `statement error` record passes when we reject the statement
too; otherwise it is counted as accepted-but-should-error, and its change is not kept,
so the data stays as SQLite's. A failed `statement ok` counts as unsupported or error
and blocks later queries over the tables it left unlike SQLite's (counted unsupported,
reason "blocked: ...").

Running: `run_paths` runs each file in a child process (`isolate=False` runs it here). A
query that makes polars abort (out of memory under the child's address-space cap,
DBSPC_SLT_MEMORY_MB) or runs past DBSPC_SLT_TIMEOUT seconds counts as one error, and a
new child resumes after it. A keyless join whose inputs multiply past
DBSPC_SLT_SIZE_LIMIT values, and any operator fed more, stops the query (an error). The
query pipelines are stepped through their executor: the harness's changes are valid by
construction, so Pipeline.step's input checks are skipped (CHECK_INPUTS turns them on).

Result order: our views are unordered. `rowsort` and `valuesort` sort like the reference
harness. For `nosort`, the rows are ordered by the query's ORDER BY when its terms map to
output columns (positions, output names, or the same expression; other terms of a plain
SELECT are appended as hidden columns); ties, or a query without ORDER BY, compare as a
multiset when the values are listed; a hashed result whose order cannot be reproduced
counts as unsupported "(order)".
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import decimal
import hashlib
import json
import logging
import math
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import polars as pl
import sqlglot
from sqlglot import exp

from compiler.circuit import operators as op
from compiler.errors import DbspcError, SqlError, UnsupportedSql
from compiler.types import SqlType
from runtime.pipeline import Pipeline
from runtime.script import step_changes
from runtime.zset import WEIGHT, ZSet

DIALECT = "sqlite"
DB_NAME = "dbspc"
QUERY_VIEW = "slt_query"
STEPS = 3

Echo = Callable[[str], None]


# ---------------------------------------------------------------------------------------
# Records


@dataclass
class Record:
    """One record of a .test file."""

    kind: str  # "statement", "query", "halt", "hash-threshold"
    line: int
    sql: str = ""
    expect_error: bool = False
    types: str = ""
    sort: str = "nosort"
    label: str | None = None
    expected: list[str] | None = None  # the listed values, or None when hashed
    expected_hash: tuple[int, str] | None = None  # (number of values, md5)
    has_result: bool = True  # a query without `----` only has to run
    conditions: list[tuple[str, str]] = field(default_factory=list)  # ("onlyif"|"skipif", db)
    threshold: int = 0


_HASHED = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")


def parse_test(text: str) -> list[Record]:
    """The records of a .test file, in order, with 1-based line numbers."""
    lines = text.splitlines()
    records: list[Record] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip() or lines[i].startswith("#"):
            i += 1
            continue
        start = i
        block: list[str] = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i])
            i += 1
        record = _parse_block(block, start + 1)
        if record is not None:
            records.append(record)
    return records


def _parse_block(block: list[str], first_line: int) -> Record | None:
    conditions: list[tuple[str, str]] = []
    j = 0
    while j < len(block):
        words = block[j].split()
        if block[j].startswith("#"):
            j += 1
        elif words[0] in ("onlyif", "skipif") and len(words) >= 2:
            conditions.append((words[0], words[1].lower()))
            j += 1
        else:
            break
    if j == len(block):
        return None
    header = block[j].split("#", 1)[0].split()
    line = first_line + j
    body = [s for s in block[j + 1 :]]
    kind = header[0] if header else ""
    if kind == "halt":
        return Record("halt", line, conditions=conditions)
    if kind == "hash-threshold":
        return Record("hash-threshold", line, threshold=int(header[1]), conditions=conditions)
    if kind == "statement":
        sql = "\n".join(s for s in body if not s.startswith("#"))
        expect_error = len(header) > 1 and header[1] == "error"
        return Record("statement", line, sql=sql, expect_error=expect_error, conditions=conditions)
    if kind == "query":
        if "----" in body:
            k = body.index("----")
            sql_lines, result, has_result = body[:k], body[k + 1 :], True
        else:
            sql_lines, result, has_result = body, [], False
        rec = Record(
            "query",
            line,
            sql="\n".join(s for s in sql_lines if not s.startswith("#")),
            types=header[1] if len(header) > 1 else "",
            sort=header[2] if len(header) > 2 else "nosort",
            label=header[3] if len(header) > 3 else None,
            has_result=has_result,
            conditions=conditions,
        )
        m = _HASHED.match(result[0].strip()) if len(result) == 1 else None
        if m:
            rec.expected_hash = (int(m.group(1)), m.group(2))
        else:
            rec.expected = result
        return rec
    raise ValueError(f"line {line}: unknown record '{block[j]}'")


def applies(record: Record, db: str = DB_NAME) -> bool:
    """Whether we run the record (see the module docstring for the policy)."""
    for cond, name in record.conditions:
        if cond == "onlyif" and name != db:
            return False
        if cond == "skipif" and name in (db, "sqlite"):
            return False
    return True


# ---------------------------------------------------------------------------------------
# Formatting, as SQLite's reference harness prints values

_INT_PREFIX = re.compile(r"^\s*([+-]?\d+)")
_FLOAT_PREFIX = re.compile(r"^\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return 0
        if v <= _INT64_MIN:
            return _INT64_MIN
        if v >= _INT64_MAX:
            return _INT64_MAX
        return int(v)  # truncates toward zero
    if isinstance(v, decimal.Decimal):
        return int(v)
    if isinstance(v, str):
        m = _INT_PREFIX.match(v)
        return max(_INT64_MIN, min(_INT64_MAX, int(m.group(1)))) if m else 0
    return _to_int(str(v))


def _to_float(v: Any) -> float:
    if isinstance(v, (bool, int, float, decimal.Decimal)):
        return float(v)
    if isinstance(v, str):
        m = _FLOAT_PREFIX.match(v)
        return float(m.group(1)) if m else 0.0
    return _to_float(str(v))


def _real_fixed(v: float) -> str:
    """'%.3f' as SQLite's printf: 16 significant digits at most (then zeros), halves rounded up."""
    if not math.isfinite(v):
        return f"{v:.3f}"
    if v == 0:
        return "0.000"  # no sign on -0.0: SQLite's printf tests v < 0
    context = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP)
    d = decimal.Decimal(format(v, ".15e")).quantize(decimal.Decimal("0.001"), context=context)
    return f"{d:.3f}"


def _real_text(v: float) -> str:
    """SQLite's text of a REAL: 15 significant digits, always with a decimal point."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    s = format(v, ".15g")
    if "e" in s:
        mantissa, exponent = s.split("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}e{exponent}"
    return s if "." in s else s + ".0"


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return _real_text(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def format_value(v: Any, letter: str) -> str:
    """One value as the reference harness prints it for column type `letter`."""
    if v is None:
        return "NULL"
    if letter == "I":
        s = str(_to_int(v))
    elif letter == "R":
        s = _real_fixed(_to_float(v))
    else:
        s = _text(v)
    if s == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in s)


def format_rows(rows: Sequence[Sequence[Any]], types: str) -> list[list[str]]:
    letters = types if types else "T"
    return [[format_value(v, letters[i] if i < len(letters) else "T") for i, v in enumerate(r)] for r in rows]


def sort_values(rows: list[list[str]], mode: str) -> list[str]:
    """The flat list of values after the record's sort mode."""
    if mode == "rowsort":
        rows = sorted(rows)
    flat = [v for r in rows for v in r]
    if mode == "valuesort":
        flat.sort()
    return flat


def md5_of(values: Sequence[str]) -> str:
    h = hashlib.md5()
    for v in values:
        h.update(v.encode())
        h.update(b"\n")
    return h.hexdigest()


def matches(values: list[str], record: Record) -> bool:
    if not record.has_result:
        return True
    if record.expected_hash is not None:
        count, digest = record.expected_hash
        return len(values) == count and md5_of(values) == digest
    return values == record.expected


# ---------------------------------------------------------------------------------------
# Totals


@dataclass
class Totals:
    passed: int = 0
    wrong: int = 0
    unsupported: int = 0
    errors: int = 0
    skipped: int = 0  # records not for us (onlyif / skipif)
    accepted_should_error: int = 0  # `statement error` records we accepted
    unsupported_reasons: Counter[str] = field(default_factory=Counter)
    error_reasons: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return self.wrong + self.errors

    def add(self, other: Totals) -> None:
        self.passed += other.passed
        self.wrong += other.wrong
        self.unsupported += other.unsupported
        self.errors += other.errors
        self.skipped += other.skipped
        self.accepted_should_error += other.accepted_should_error
        self.unsupported_reasons.update(other.unsupported_reasons)
        self.error_reasons.update(other.error_reasons)
        self.seconds += other.seconds

    def summary(self) -> str:
        text = f"{self.passed} passed, {self.wrong} wrong, {self.unsupported} unsupported, {self.errors} errors"
        if self.accepted_should_error:
            text += f", {self.accepted_should_error} accepted-but-should-error"
        if self.skipped:
            text += f", {self.skipped} skipped"
        return text


# ---------------------------------------------------------------------------------------
# The file's database, kept by the harness


class _Blocked(Exception):
    """A query or statement reads a table that an earlier failure left unlike SQLite's."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind  # "unsupported" or "error"
        self.reason = reason


class _Reject(SqlError):
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


def _parse(sql: str) -> list[exp.Expr]:
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
_PLAIN_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)\s*(\([^)]*\))?\s*VALUES\b", re.IGNORECASE)
_WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)


class Database:
    """The tables, views and contents of one .test file, as SQLite would hold them."""

    def __init__(self) -> None:
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

    # -- statements ------------------------------------------------------------------------

    def execute(self, sql: str, expect_error: bool = False) -> None:
        """Apply one statement record; raises on failure. A rejected-by-SQLite change is undone."""
        m = _TRIGGER.match(sql)
        if m:
            return self._create_trigger(m)
        m = _REINDEX.match(sql)
        if m:
            name = m.group(1).lower()
            if name and name not in self.indexes and name not in self.tables:
                raise _Reject(f"no such index or table: {name}")
            return None
        if _REPLACE.match(sql):
            sql = _REPLACE.sub("INSERT OR REPLACE INTO", sql, count=1)
        statements = _parse(sql)
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
            raise _Reject(f"table {name} already exists")
        try:
            store = Pipeline.from_sql(text, DIALECT)  # refuses what dbspc cannot hold
        except Exception as e:
            if not expect_error:
                self.blocked[name] = (_kind(e), f"CREATE TABLE {name}: {_reason(e)}")
            raise
        self.tables[name] = _Relation(name, text, keys=_key_sets(stmt))
        self.stores[name] = store
        self.versions[name] = self.versions.get(name, 0) + 1

    def _create_view(self, stmt: exp.Create, text: str, expect_error: bool) -> None:
        name = stmt.this.this.name.lower() if isinstance(stmt.this, exp.Schema) else stmt.this.name.lower()
        if self._exists(name):
            if stmt.args.get("exists"):
                return
            raise _Reject(f"view {name} already exists")
        query = stmt.expression
        refs = frozenset(_references(query)) if query is not None else frozenset()
        view = _Relation(name, text, refs=refs)
        try:
            self._check_blocked(refs)
            self._pipeline([view])
        except _Blocked as b:
            self.blocked[name] = (b.kind, b.reason)
            raise
        except Exception as e:
            if not expect_error:  # SQLite has the view: queries over it cannot run here
                self.blocked[name] = (_kind(e), f"view {name}: {_reason(e)}")
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
            raise _Reject(f"index {name} already exists")
        if table_name not in self.tables and table_name not in self.blocked:
            raise _Reject(f"no such table: {table_name}")
        self.indexes[name] = table_name

    def _create_trigger(self, m: re.Match[str]) -> None:
        name, table, body = m.group(2).lower(), m.group(3).lower(), m.group(4)
        if name in self.triggers:
            if m.group(1):
                return
            raise _Reject(f"trigger {name} already exists")
        if table not in self.tables and table not in self.views and table not in self.blocked:
            raise _Reject(f"no such table: {table}")
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
                raise _Reject(f"no such index: {name}")
            return
        if kind == "TRIGGER":
            if self.triggers.pop(name, None) is None and not if_exists:
                raise _Reject(f"no such trigger: {name}")
            return
        if kind not in ("TABLE", "VIEW"):
            raise UnsupportedSql(f"DROP {kind} is not supported by the harness")
        own = self.tables if kind == "TABLE" else self.views
        other = self.views if kind == "TABLE" else self.tables
        if name in other:
            raise _Reject(f"use DROP {'VIEW' if kind == 'TABLE' else 'TABLE'} to delete {name}")
        if name not in own and name not in self.blocked:
            if if_exists:
                return
            raise _Reject(f"no such {kind.lower()}: {name}")
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
            raise _Reject(f"cannot modify {table} because it is a view")
        if table in self.blocked:
            kind, reason = self.blocked[table]
            raise _Blocked(kind, reason)
        if table not in self.stores:
            raise _Reject(f"no such table: {table}")
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
                self.blocked[table] = (_kind(e), f"{text.split(None, 1)[0].upper()} into {table}: {_reason(e)}")
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
            raise _Reject(f"table {table} has no column named {unknown[0]}")
        query = stmt.expression
        assert query is not None
        rows, got = self.query_rows(query.sql(DIALECT))
        if len(got) != len(names):
            raise _Reject(f"{len(names)} columns but the query gives {len(got)} values")
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
                raise _Reject(f"UNIQUE constraint failed: {table}.{cols}")
            survivors.append(row)
            inserted.append(row)
            for k in keys:
                kv = key(row, k)
                if kv is not None:
                    taken[k].add(kv)
        rows = [*removed, *extra_deletes, *inserted]
        weights = [-1] * (len(removed) + len(extra_deletes)) + [1] * len(inserted)
        return ZSet.from_rows(rows, change.types, weights).consolidate()

    # -- queries ---------------------------------------------------------------------------

    def _check_blocked(self, refs: frozenset[str] | set[str]) -> None:
        for name in sorted(self._closure(refs)):
            if name in self.blocked:
                kind, reason = self.blocked[name]
                raise _Blocked(kind, f"blocked: {reason}")

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
        ddl = [t.ddl for n, t in self.tables.items() if n in wanted]
        ddl += [v.ddl for n, v in self.views.items() if n in wanted]
        ddl += [r.ddl for r in last]
        return Pipeline.from_sql(";\n".join(ddl), DIALECT)

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
        return run_view(pipeline, QUERY_VIEW, self.steps_for(list(pipeline.program.tables)))


# The harness's changes are valid by construction (typed by the same DDL, consolidated, deleting
# only rows inserted before), so by default a query's pipeline is stepped through its executor,
# skipping Pipeline.step's input checks and table traces: a quarter of the run time.
CHECK_INPUTS = False


# An intermediate result past this many values (rows x columns) stops the query with an error
# naming the operator, before it takes all memory: a keyless join is checked before it runs
# (its output is the product of its inputs), every other operator on its inputs.
SIZE_LIMIT = int(os.environ.get("DBSPC_SLT_SIZE_LIMIT", "5000000"))


class IntermediateTooLarge(Exception):
    pass


def guard_sizes(pipeline: Pipeline, limit: int) -> None:
    """Make the pipeline's executor refuse intermediate results of more than `limit` values."""
    executor = pipeline.executor
    evaluate = getattr(executor, "_evaluate", None)
    if evaluate is None:
        return
    circuit = executor.circuit

    def guarded(n: int, values: dict[int, Any], *rest: Any) -> Any:
        o = circuit[n]
        sizes = [(len(values[i]), len(circuit[i].types)) for i in o.inputs]
        if isinstance(o, op.Join) and not o.left_keys:
            (left, _), (right, _) = sizes
            if left * right * max(len(o.types), 1) > limit:
                raise IntermediateTooLarge(
                    f"a cross join of {left} x {right} rows, {len(o.types)} columns (over the harness's limit "
                    f"of {limit} values): the plan joins tables without a key"
                )
        for rows, width in sizes:
            if rows * max(width, 1) > limit:
                raise IntermediateTooLarge(
                    f"an input of {rows} rows x {width} columns to {o.kind} (over the harness's limit of "
                    f"{limit} values)"
                )
        return evaluate(n, values, *rest)

    setattr(executor, "_evaluate", guarded)  # noqa: B010 - an instance attribute shadows the method


def _step(pipeline: Pipeline, changes: dict[str, ZSet]) -> dict[str, ZSet]:
    if CHECK_INPUTS or not pipeline.incremental:
        return pipeline.step(changes)
    return pipeline.executor.step(changes)


class WrongResult(Exception):
    """The view's content is not a relation (a negative multiplicity)."""


def run_view(
    pipeline: Pipeline, view: str, steps: list[dict[str, ZSet]]
) -> tuple[list[tuple[Any, ...]], tuple[SqlType, ...]]:
    guard_sizes(pipeline, SIZE_LIMIT)
    types = pipeline.view_types(view)
    total = ZSet.empty(types)
    for number, changes in enumerate(steps, start=1):
        delta = _step(pipeline, changes)[view]
        total = ZSet.concat([total, delta], types).consolidate()
        if not total.is_positive():
            bad = total.frame.filter(pl.col(WEIGHT) < 0).row(0)
            raise WrongResult(f"after step {number} the view holds row {bad[:-1]} with weight {bad[-1]}")
    rows: list[tuple[Any, ...]] = []
    for r in total.frame.iter_rows():
        rows.extend([tuple(r[:-1])] * int(r[-1]))
    return rows, types


# ---------------------------------------------------------------------------------------
# ORDER BY for nosort queries


@dataclass
class OrderPlan:
    sql: str  # the view's query, maybe with hidden columns appended
    terms: list[tuple[int, bool, bool]]  # (column, desc, nulls_first); a hidden column counts from the end
    hidden: int = 0


def order_plan(sql: str, tree: exp.Expr) -> OrderPlan | None:
    """How to order the view's rows as the query's ORDER BY, if we can."""
    order = tree.args.get("order")
    if not isinstance(order, exp.Order) or not order.expressions:
        return None
    first = tree
    while isinstance(first, exp.SetOperation):
        first = first.this
    outputs = list(first.expressions) if isinstance(first, exp.Select) else []
    names = [o.alias_or_name.lower() if not isinstance(o, exp.Star) else "*" for o in outputs]
    bare = [(o.this if isinstance(o, exp.Alias) else o).sql(DIALECT) for o in outputs]
    star = any(isinstance(o, exp.Star) or (isinstance(o, exp.Column) and isinstance(o.this, exp.Star)) for o in outputs)
    terms: list[tuple[int, bool, bool]] = []
    extra: list[exp.Expr] = []
    for ordered in order.expressions:
        e = ordered.this
        desc = bool(ordered.args.get("desc"))
        nulls_first = bool(ordered.args.get("nulls_first")) if ordered.args.get("nulls_first") is not None else not desc
        index: int | None = None
        if isinstance(e, exp.Literal) and e.is_int:
            index = int(e.name) - 1
        elif not star and isinstance(e, exp.Column) and not e.table and e.name.lower() in names:
            index = names.index(e.name.lower())
        elif not star and e.sql(DIALECT) in bare:
            index = bare.index(e.sql(DIALECT))
        if index is None:
            if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
                return None
            extra.append(e)
            terms.append((-len(extra), desc, nulls_first))
        else:
            terms.append((index, desc, nulls_first))
    if not extra:
        return OrderPlan(sql, terms)
    rewritten = tree.copy()
    assert isinstance(rewritten, exp.Select)
    for e in extra:
        rewritten = rewritten.select(e.copy(), append=True, copy=False)
    return OrderPlan(rewritten.sql(DIALECT), terms, hidden=len(extra))


def _sort_key(column: int, null_rank: int) -> Callable[[tuple[Any, ...]], tuple[int, Any]]:
    def key(row: tuple[Any, ...]) -> tuple[int, Any]:
        v = row[column]
        return (null_rank, 0) if v is None else (1, v)

    return key


def order_rows(rows: list[tuple[Any, ...]], plan: OrderPlan) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows in ORDER BY order, and whether ties leave some order undecided."""
    width = len(rows[0]) if rows else 0
    # term -k names the k-th hidden column, appended after the query's own columns
    columns = [i if i >= 0 else width - plan.hidden - i - 1 for i, _, _ in plan.terms]
    out = list(rows)
    for c, (_, desc, nulls_first) in reversed(list(zip(columns, plan.terms, strict=True))):
        out.sort(key=_sort_key(c, 0 if nulls_first != desc else 2), reverse=desc)
    keys = [tuple(r[c] for c in columns) for r in out]
    ties = any(keys[j] == keys[j + 1] and out[j] != out[j + 1] for j in range(len(out) - 1))
    return out, ties


# ---------------------------------------------------------------------------------------
# Running files


def _kind(e: BaseException) -> str:
    return "unsupported" if isinstance(e, UnsupportedSql) else "error"


def _reason(e: BaseException) -> str:
    message = e.message if isinstance(e, DbspcError) else str(e)
    message = " ".join(message.split())
    if not isinstance(e, DbspcError) or isinstance(e, _Reject):
        message = f"{type(e).__name__}: {message}"
    return message[:160]


def _reason_key(reason: str) -> str:
    """A reason with query-specific details blurred, so equal causes count together."""
    reason = re.sub(r"\b_col_\d+\b", "_col_N", reason)
    return re.sub(r"'([^']{40})[^']+'", r"'\1…'", reason)


@dataclass
class Outcome:
    status: str  # passed, wrong, unsupported, error
    reason: str = ""
    expected: list[str] | None = None
    got: list[str] | None = None


Sink = Callable[[dict[str, Any]], None]


class FileRunner:
    """Runs one file in this process. Every counted event goes to `sink` (the default records
    it in `totals`); a child process of `run_file` sends them to its parent instead."""

    def __init__(
        self,
        path: str,
        verbose: bool = False,
        limit: int | None = None,
        echo: Echo = print,
        sink: Sink | None = None,
        shard: tuple[int, int] = (0, 1),
    ) -> None:
        self.path = path
        # run the queries whose ordinal is k modulo n; shard 0 also reports the statements
        self.shard = shard
        self.verbose = verbose
        self.limit = limit
        self.echo = echo
        self.sink: Sink = sink or self.take
        self._start = 0
        self.db = Database()
        self.totals = Totals()

    def run(self, start: int = 0, skip: frozenset[int] = frozenset()) -> Totals:
        """Run the records from index `start` on; earlier statements run silently, earlier queries not
        at all, and the records in `skip` (that crashed a process) not at all."""
        began = time.perf_counter()
        records = parse_test(Path(self.path).read_text())
        queries, ordinal = 0, -1
        k, n = self.shard
        self._start = start
        pending: list[tuple[int, Record]] = []  # consecutive plain INSERTs, applied as one change per table
        for index, rec in enumerate(records):
            if index in skip:
                continue
            if rec.kind == "query" and applies(rec):
                ordinal += 1
                if ordinal % n != k:
                    continue
            quiet = index < start or (rec.kind != "query" and k != 0)
            if not applies(rec):
                if rec.kind in ("statement", "query") and not quiet:
                    self.sink({"event": "skipped"})
                continue
            if rec.kind == "statement" and not rec.expect_error and _PLAIN_INSERT.match(rec.sql):
                pending.append((index, rec))
                continue
            self._flush(pending, start if k == 0 else len(records))
            pending = []
            if rec.kind == "halt":
                break
            if rec.kind == "statement":
                self._statement(index, rec, quiet)
            elif rec.kind == "query" and not quiet:
                if self.limit is not None and queries >= self.limit:
                    break
                queries += 1
                self.sink({"event": "start", "index": index})
                self._emit(rec, self._query(rec))
        self._flush(pending, start if k == 0 else len(records))
        self.totals.seconds = time.perf_counter() - began
        return self.totals

    def _flush(self, inserts: list[tuple[int, Record]], start: int) -> None:
        if not inserts:
            return
        if inserts[0][0] >= self._start:
            self.sink({"event": "start", "index": inserts[0][0]})
        by_table: dict[str, list[tuple[int, Record]]] = {}
        for index, rec in inserts:
            m = _PLAIN_INSERT.match(rec.sql)
            assert m is not None
            by_table.setdefault(m.group(1).lower(), []).append((index, rec))
        for table, recs in by_table.items():
            if not self.db.insert_batch(table, [r.sql.strip().rstrip(";") for _, r in recs]):
                for index, rec in recs:
                    self._statement(index, rec, index < start)

    def _statement(self, index: int, rec: Record, quiet: bool) -> None:
        if index >= self._start:  # where a crash happened, even in a shard that does not count statements
            self.sink({"event": "start", "index": index})
        outcome: Outcome | None = None
        try:
            self.db.execute(rec.sql, rec.expect_error)
        except _Blocked:
            # a statement ok over a blocked table: the root cause is already counted
            outcome = Outcome("passed") if rec.expect_error else None
        except Exception as e:  # every failure is an outcome
            outcome = Outcome("passed") if rec.expect_error else Outcome(_kind(e), _reason(e))
        else:
            if rec.expect_error and not quiet:
                self.sink({"event": "accepted", "line": rec.line, "sql": rec.sql})
        if outcome is not None and not quiet:
            self._emit(rec, outcome)

    def _emit(self, rec: Record, outcome: Outcome) -> None:
        event: dict[str, Any] = {"event": "outcome", "line": rec.line, "sql": rec.sql, "query": rec.kind == "query"}
        event.update(status=outcome.status, reason=outcome.reason, expected=outcome.expected, got=outcome.got)
        self.sink(event)

    def take(self, event: dict[str, Any]) -> None:
        """Count one event in `totals` (and print it when verbose)."""
        t = self.totals
        kind = event["event"]
        if kind == "skipped":
            t.skipped += 1
        elif kind == "accepted":
            t.accepted_should_error += 1
            if self.verbose:
                self.echo(f"{self.path}:{event['line']}: accepted, but SQLite rejects it")
                self.echo(f"    {_indent(event['sql'])}")
        elif kind == "outcome":
            self._record(event)

    def _record(self, event: dict[str, Any]) -> None:
        t = self.totals
        status, reason = event["status"], event["reason"]
        if status == "passed":
            t.passed += 1
            return
        if status == "wrong":
            t.wrong += 1
        elif status == "unsupported":
            t.unsupported += 1
            t.unsupported_reasons[_reason_key(reason)] += 1
        else:
            t.errors += 1
            t.error_reasons[_reason_key(reason)] += 1
        if self.verbose:
            self.echo(f"{self.path}:{event['line']}: {status}: {reason}")
            self.echo(f"    {_indent(event['sql'])}")
            if status == "wrong":
                self.echo(f"    expected: {_clip(event['expected'])}")
                self.echo(f"    got:      {_clip(event['got'])}")

    def _query(self, rec: Record) -> Outcome:
        sql = rec.sql.strip().rstrip(";")
        try:
            plan = None
            if rec.sort == "nosort" and "order" in sql.lower():
                parsed = _parse(sql)
                if len(parsed) != 1:
                    raise SqlError("a query must be one statement")
                plan = order_plan(sql, parsed[0])
            rows = None
            if plan is not None and plan.hidden:
                try:
                    rows, _ = self.db.query_rows(plan.sql)
                except DbspcError:
                    plan = None  # the ORDER BY terms cannot be output columns here
            if rows is None:
                rows, _ = self.db.query_rows(sql)
        except _Blocked as b:
            return Outcome(b.kind, b.reason)
        except WrongResult as w:
            return Outcome("wrong", str(w))
        except Exception as e:
            return Outcome(_kind(e), _reason(e))
        return compare(rec, rows, plan)


def compare(rec: Record, rows: list[tuple[Any, ...]], plan: OrderPlan | None) -> Outcome:
    """Check a query's rows (raw values, with duplicates) against the record's expected values."""
    hidden = plan.hidden if plan is not None else 0
    width = (len(rows[0]) if rows else len(rec.types) + hidden) - hidden
    if rows and width != len(rec.types):
        return Outcome("wrong", f"{width} columns, the record expects {len(rec.types)}")
    ties = False
    if rec.sort == "nosort" and plan is not None:
        rows, ties = order_rows(rows, plan)
    shown = format_rows([r[:width] for r in rows], rec.types)
    values = sort_values(shown, rec.sort if rec.sort in ("rowsort", "valuesort") else "nosort")
    if matches(values, rec):
        return Outcome("passed")
    if rec.sort == "nosort" and len(rows) > 1 and (plan is None or ties):
        if rec.expected is None:
            return Outcome("unsupported", "(order) a hashed nosort result whose row order we cannot reproduce")
        # the order is not ours to reproduce: compare as a multiset of rows
        n = len(rec.types)
        expected_rows = [rec.expected[i : i + n] for i in range(0, len(rec.expected), n)]
        if sorted(shown) == sorted(expected_rows):
            return Outcome("passed")
    return Outcome("wrong", "result differs", _expected(rec), values)


def _expected(rec: Record) -> list[str]:
    if rec.expected_hash is not None:
        return [f"{rec.expected_hash[0]} values hashing to {rec.expected_hash[1]}"]
    return rec.expected or []


def _clip(values: list[str] | None, n: int = 24) -> str:
    if values is None:
        return "-"
    shown = " ".join(values[:n])
    more = f" ... ({len(values)} values, md5 {md5_of(values)})" if len(values) > n else ""
    return shown + more


def _indent(sql: str) -> str:
    return sql.strip().replace("\n", "\n    ")


def find_test_files(paths: Sequence[str]) -> list[str]:
    """Files given, and every *.test below directories given, in order."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*.test")))
        else:
            out.append(str(path))
    return out


# ---------------------------------------------------------------------------------------
# Isolation: a file runs in a child process, so that a query that exhausts memory (polars
# aborts the process) or runs away costs one error, not the run. The child reports each
# event as a JSON line; when it dies, the record it was on counts as an error and a new
# child resumes after it.

ROOT = Path(__file__).resolve().parent.parent
MEMORY_MB = int(os.environ.get("DBSPC_SLT_MEMORY_MB", "6144"))  # address-space cap of a child
RECORD_TIMEOUT = float(os.environ.get("DBSPC_SLT_TIMEOUT", "120"))  # seconds one record may take


def _child_setup() -> None:
    """In the child before it starts: cap its memory, and have it die with its parent (Linux)."""
    cap = MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run_file(
    path: str,
    verbose: bool = False,
    limit: int | None = None,
    echo: Echo = print,
    isolate: bool = True,
    shard: tuple[int, int] = (0, 1),
) -> Totals:
    """One file's totals; `shard=(k, n)` runs every n-th query from the k-th (for parallel runs)."""
    if not isolate:
        return FileRunner(path, verbose, limit, echo, shard=shard).run()
    parent = FileRunner(path, verbose, limit, echo)
    began = time.perf_counter()
    start, queries = 0, 0
    crashed: list[int] = []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    while True:
        cmd = [sys.executable, "-m", "runtime.sqllogictest", "--child", "--from", str(start), path]
        cmd += ["--shard", f"{shard[0]}/{shard[1]}"]
        if crashed:
            cmd += ["--skip", ",".join(map(str, crashed))]
        if limit is not None:
            cmd += ["--limit", str(limit - queries)]
        with tempfile.TemporaryFile() as stderr:
            child = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT, env=env, preexec_fn=_child_setup
            )
            current, done, timed_out = None, False, False
            assert child.stdout is not None
            try:
                for line in _lines(child.stdout, RECORD_TIMEOUT):
                    if line is None:
                        timed_out = True
                        break
                    event = json.loads(line)
                    if event["event"] == "start":
                        current = event["index"]
                    elif event["event"] == "done":
                        done = True
                    else:
                        queries += event["event"] == "outcome" and event.get("query", False)
                        parent.take(event)
            finally:
                if child.poll() is None and not done:
                    child.kill()
                code = child.wait()
            if done:
                break
            stderr.seek(0)
            tail = [s for s in stderr.read().decode(errors="replace").splitlines() if s.strip()]
        if current is None:
            raise RuntimeError(f"{path}: the test runner failed: {' | '.join(tail[-5:])}")
        records = parse_test(Path(path).read_text())
        rec = records[current]
        if timed_out:
            reason = f"timeout: a record ran over {RECORD_TIMEOUT:.0f}s"
        else:
            died = f"signal {-code}" if code < 0 else f"exit code {code}"
            said = [s for s in tail if not s.startswith((" ", "stack backtrace", "note:", "skipping backtrace"))]
            oom = [s for s in said if "memory allocation of" in s or "MemoryError" in s]
            last = f"out of memory (cap {MEMORY_MB} MB): {oom[0]}" if oom else said[-1] if said else ""
            reason = f"crashed ({died}): {last[:120]}"
        if rec.kind == "query" or shard[0] == 0:  # shard 0 alone counts statements
            parent.take({"event": "outcome", "line": rec.line, "sql": rec.sql, "status": "error", "reason": reason})
        queries += rec.kind == "query"
        crashed.append(current)
        start = current + 1
    parent.totals.seconds = time.perf_counter() - began
    return parent.totals


def _lines(stream: IO[bytes], timeout: float) -> Iterator[str | None]:
    """The stream's lines; None when no line came for `timeout` seconds."""
    fd = stream.fileno()
    buffer = b""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            yield None
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk


def _child(path: str, start: int, limit: int | None, skip: frozenset[int], shard: tuple[int, int]) -> None:
    out = sys.stdout

    def send(event: dict[str, Any]) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    FileRunner(path, limit=limit, sink=send, shard=shard).run(start, skip)
    send({"event": "done"})


def run_paths(
    paths: Sequence[str], verbose: bool = False, limit: int | None = None, echo: Echo = print, isolate: bool = True
) -> Totals:
    """Run every file; print per-file counts, the top reasons, and `N passed, M failed` last."""
    totals = Totals()
    for path in find_test_files(paths):
        t = run_file(path, verbose, limit, echo, isolate)
        echo(f"{path}: {t.summary()} ({t.seconds:.1f}s)")
        totals.add(t)
    if totals.unsupported_reasons:
        echo(f"top unsupported ({totals.unsupported}):")
        for reason, n in totals.unsupported_reasons.most_common(15):
            echo(f"  {n:6d}  {reason}")
    if totals.error_reasons:
        echo(f"top errors ({totals.errors}):")
        for reason, n in totals.error_reasons.most_common(15):
            echo(f"  {n:6d}  {reason}")
    echo(f"total: {totals.summary()} ({totals.seconds:.1f}s)")
    echo(f"{totals.passed} passed, {totals.failed} failed")
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime.sqllogictest", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="stop after this many queries per file")
    parser.add_argument("--in-process", action="store_true", help="run files in this process (no crash isolation)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--from", dest="start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--skip", default="", help=argparse.SUPPRESS)
    parser.add_argument("--shard", default="0/1", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        skip = frozenset(int(i) for i in args.skip.split(",") if i)
        k, n = (int(x) for x in args.shard.split("/"))
        _child(args.paths[0], args.start, args.limit, skip, (k, n))
        return 0
    totals = run_paths(args.paths, verbose=args.verbose, limit=args.limit, isolate=not args.in_process)
    return 1 if totals.wrong else 0


if __name__ == "__main__":
    sys.exit(main())

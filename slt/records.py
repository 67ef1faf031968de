"""The sqllogictest record format: a `.test` file is a sequence of records separated by blank lines:

    statement ok|error         then the SQL
    query <types> <sort> [label]   then the SQL, `----`, and the expected values
    hash-threshold N
    halt

preceded by optional `onlyif <db>` / `skipif <db>` lines; `#` starts a comment line.

Conditions: we are the database "dbspc". Expected results follow SQLite semantics, but
a record `onlyif sqlite` tests a SQLite-only extension (`x IN ()`, `x IN table`, TEMP
views), so we skip it; `skipif sqlite` marks a record whose expected result is not
SQLite's, so we skip it too. `onlyif X` for any X but dbspc skips; `skipif dbspc` skips.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DB_NAME = "dbspc"


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

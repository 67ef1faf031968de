"""Run sqllogictest files against dbspc, every query as an incremental view (`dbspc slt`).

A file's statements keep a database with SQLite's semantics (`slt.sqlite`); each query runs
as an incremental view fed the tables' contents in steps (`slt.incremental`), and its result
is ordered, hashed and compared as the reference harness does (`slt.results`). Files run in
child processes (`slt.isolation`) unless `isolate=False`.

Outcomes per query: passed; wrong (a result that differs from the expected one, the
number that must stay 0); unsupported (`UnsupportedSql`, counted per message); error
(any other exception). A `statement error` record passes when we reject the statement
too; otherwise it is counted as accepted-but-should-error, and its change is not kept,
so the data stays as SQLite's. A failed `statement ok` counts as unsupported or error
and blocks later queries over the tables it left unlike SQLite's (counted unsupported,
reason "blocked: ...").
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbspc.compiler.errors import DbspcError, SqlError
from dbspc.slt.incremental import Limits, WrongResult
from dbspc.slt.isolation import run_isolated
from dbspc.slt.records import Record, applies, find_test_files, parse_test
from dbspc.slt.results import Outcome, compare, md5_of, order_plan
from dbspc.slt.sqlite import PLAIN_INSERT, Blocked, Database, kind_of, parse_sql, reason_of

Echo = Callable[[str], None]
Sink = Callable[[dict[str, Any]], None]


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


def _reason_key(reason: str) -> str:
    """A reason with query-specific details blurred, so equal causes count together."""
    reason = re.sub(r"\b_col_\d+\b", "_col_N", reason)
    if reason.startswith("IntermediateTooLarge"):
        reason = re.sub(r"\b\d+\b", "N", reason)
    return re.sub(r"'([^']{40})[^']+'", r"'\1…'", reason)


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
        limits: Limits | None = None,
    ) -> None:
        self.path = path
        # run the queries whose ordinal is k modulo n; shard 0 also reports the statements
        self.shard = shard
        self.verbose = verbose
        self.limit = limit
        self.echo = echo
        self.sink: Sink = sink or self.take
        self._start = 0
        self.db = Database(limits)
        self.totals = Totals()

    def run(self, start: int = 0, skip: frozenset[int] = frozenset(), lost: Mapping[int, str] | None = None) -> Totals:
        """Run the records from index `start` on; earlier statements run silently, earlier queries not
        at all, and the records in `skip` (that crashed a process) not at all. A statement among
        them (`lost`: why its process died) blocks the tables it writes, and an INSERT the rest of
        its batch's tables: what it did to them before it died is unknown."""
        began = time.perf_counter()
        records = parse_test(Path(self.path).read_text())
        queries, ordinal = 0, -1
        k, n = self.shard
        self._start = start
        pending: list[tuple[int, Record]] = []  # consecutive plain INSERTs, applied as one change per table
        losing: str | None = None  # while the inserts batched with a lost one go on: why
        for index, rec in enumerate(records):
            if index in skip:
                if rec.kind == "statement":
                    reason = f"line {rec.line}: {(lost or {}).get(index, 'its process died')}"
                    self.db.lose(rec.sql, reason)
                    losing = reason if PLAIN_INSERT.match(rec.sql) else None
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
            if rec.kind == "statement" and not rec.expect_error and PLAIN_INSERT.match(rec.sql):
                if losing is not None:
                    self.db.lose(rec.sql, losing)
                    continue
                pending.append((index, rec))
                continue
            losing = None
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
        self.sink({"event": "start" if inserts[0][0] >= self._start else "replay", "index": inserts[0][0]})
        by_table: dict[str, list[tuple[int, Record]]] = {}
        for index, rec in inserts:
            m = PLAIN_INSERT.match(rec.sql)
            assert m is not None
            by_table.setdefault(m.group(1).lower(), []).append((index, rec))
        for table, recs in by_table.items():
            if not self.db.insert_batch(table, [r.sql.strip().rstrip(";") for _, r in recs]):
                for index, rec in recs:
                    self._statement(index, rec, index < start)

    def _statement(self, index: int, rec: Record, quiet: bool) -> None:
        # where a crash happens, even in a shard that does not count statements, or in a
        # replay of the statements before `start` (which counts nothing)
        self.sink({"event": "start" if index >= self._start else "replay", "index": index})
        outcome: Outcome | None = None
        try:
            self.db.execute(rec.sql, rec.expect_error)
        except Blocked:
            # a statement ok over a blocked table: the root cause is already counted
            outcome = Outcome("passed") if rec.expect_error else None
        except Exception as e:  # every failure is an outcome
            outcome = Outcome("passed") if rec.expect_error else Outcome(kind_of(e), reason_of(e))
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
                parsed = parse_sql(sql)
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
        except Blocked as b:
            return Outcome(b.kind, b.reason)
        except WrongResult as w:
            return Outcome("wrong", str(w))
        except Exception as e:
            return Outcome(kind_of(e), reason_of(e))
        return compare(rec, rows, plan)


def run_file(
    path: str,
    verbose: bool = False,
    limit: int | None = None,
    echo: Echo = print,
    isolate: bool = True,
    shard: tuple[int, int] = (0, 1),
    limits: Limits | None = None,
) -> Totals:
    """One file's totals; `shard=(k, n)` runs every n-th query from the k-th (for parallel runs)."""
    limits = limits or Limits()
    if not isolate:
        return FileRunner(path, verbose, limit, echo, shard=shard, limits=limits).run()
    parent = FileRunner(path, verbose, limit, echo, limits=limits)
    began = time.perf_counter()
    run_isolated(path, parent.take, limit, shard, limits)
    parent.totals.seconds = time.perf_counter() - began
    return parent.totals


def run_paths(
    paths: Sequence[str],
    verbose: bool = False,
    limit: int | None = None,
    echo: Echo = print,
    isolate: bool = True,
    limits: Limits | None = None,
    table: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    jobs: int = 1,
) -> Totals:
    """Run every file; print per-file counts, the top reasons, with `table` a Markdown table
    of the files, and `N passed, M failed` last. `progress(done, total, file)` is told
    before each file and once at the end. With `jobs` > 1, that many files run at once,
    each in its own process; every file's lines are printed together, in file order."""
    if jobs > 1 and not isolate:
        raise ValueError("files run in parallel only in their own processes (not in-process)")
    totals = Totals()
    rows: list[tuple[str, Totals]] = []
    files = list(find_test_files(paths))
    began = time.perf_counter()

    def one(path: str, out: Echo) -> Totals:
        if progress is not None and jobs == 1:
            progress(files.index(path), len(files), path)
        return run_file(path, verbose, limit, out, isolate, limits=limits)

    for done, (path, (t, lines)) in enumerate(zip(files, _in_order(files, one, jobs, echo), strict=True)):
        if progress is not None and jobs > 1:
            progress(done + 1, len(files), path)
        for line in lines:
            echo(line)
        echo(f"{path}: {t.summary()} ({t.seconds:.1f}s)")
        totals.add(t)
        rows.append((path, t))
    if progress is not None:
        progress(len(files), len(files), "")
    if totals.unsupported_reasons:
        echo(f"top unsupported ({totals.unsupported}):")
        for reason, n in totals.unsupported_reasons.most_common(15):
            echo(f"  {n:6d}  {reason}")
    if totals.error_reasons:
        echo(f"top errors ({totals.errors}):")
        for reason, n in totals.error_reasons.most_common(15):
            echo(f"  {n:6d}  {reason}")
    totals.seconds = time.perf_counter() - began  # the run's wall time (files may overlap)
    echo(f"total: {totals.summary()} ({totals.seconds:.1f}s)")
    if table:
        for line in markdown_table(rows, totals):
            echo(line)
    echo(f"{totals.passed} passed, {totals.failed} failed")
    return totals


def _in_order(
    files: Sequence[str], one: Callable[[str, Echo], Totals], jobs: int, echo: Echo
) -> Iterator[tuple[Totals, list[str]]]:
    """Each file's totals and the lines it printed, in file order: with one job, as they run
    (its lines printed at once); with more, `jobs` files at a time on threads (each waits on
    its file's process), their lines held until the file's turn."""
    if jobs <= 1:
        for path in files:
            yield one(path, echo), []
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="slt") as pool:

        def buffered(path: str) -> tuple[Totals, list[str]]:
            lines: list[str] = []
            return one(path, lines.append), lines

        futures = [pool.submit(buffered, path) for path in files]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def markdown_table(rows: Sequence[tuple[str, Totals]], totals: Totals) -> list[str]:
    """One line per file and the totals: passed, wrong, refused (unsupported), errored, and the
    passed share of all counted records (refused and errored count against it)."""
    names = [p for p, _ in rows]
    common = os.path.commonpath([str(Path(n).parent) for n in names]) if names else ""
    lines = [
        "| file | passed | wrong | refused | errored | % passed | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for path, t in [*[(os.path.relpath(p, common) if common else p, t) for p, t in rows], ("**total**", totals)]:
        counted = t.passed + t.wrong + t.unsupported + t.errors
        share = f"{100 * t.passed / counted:.2f}" if counted else "-"
        lines.append(f"| {path} | {t.passed} | {t.wrong} | {t.unsupported} | {t.errors} | {share} | {t.seconds:.0f} |")
    return lines


def _clip(values: list[str] | None, n: int = 24) -> str:
    if values is None:
        return "-"
    shown = " ".join(values[:n])
    more = f" ... ({len(values)} values, md5 {md5_of(values)})" if len(values) > n else ""
    return shown + more


def _indent(sql: str) -> str:
    return sql.strip().replace("\n", "\n    ")

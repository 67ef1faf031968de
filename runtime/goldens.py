"""Golden SQL regression tests of a team's own views: `dbspc test DIR` and the pytest
plugin (dbspc/pytest_plugin.py) run the same check.

A golden is a script (`CREATE TABLE`s, `CREATE VIEW`s, then `-- step` blocks of
INSERT/DELETE/UPDATE, as `dbspc run` takes it) with its expected output beside it:
`<name>.out`, each step's output deltas as `dbspc run --output jsonl` prints them, and
optionally `<name>.circuit`, the incremental circuit as `dbspc compile` dumps it (a
changed plan then shows in review). A check runs the script and compares both, showing
a unified diff on a mismatch.

`update` rewrites the goldens, but only when an oracle agrees: after every step, each
view's output integrated so far must equal the oracle recomputing the view from scratch
on the tables as they are then (DuckDB by default; Spark SQL, the reference for the
default dialect, with `oracle="spark"`). A golden is never blessed on dbspc's word alone.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbspc.compiler.circuit.dump import to_text
from dbspc.compiler.errors import DbspcError, source_text
from dbspc.runtime.render import jsonl_lines
from dbspc.runtime.script import ScriptRun, run_script
from dbspc.runtime.zset import ZSet


@dataclass(frozen=True)
class Outcome:
    path: Path
    ok: bool
    message: str = ""  # a diff, an error, or what was updated
    updated: tuple[str, ...] = ()


def golden_paths(root: Path) -> list[Path]:
    """The scripts of a directory (recursively), or the one script named."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*.sql") if not any(part.startswith(".") for part in p.parts))


def integrated_outputs(run: ScriptRun) -> list[dict[str, ZSet]]:
    """Each view's contents after each step: the running sum of its output deltas."""
    pipeline = run.pipeline
    totals = {v: ZSet.empty(pipeline.view_types(v)) for v in pipeline.view_names()}
    out = []
    for deltas in run.outputs:
        for view, delta in deltas.items():
            totals[view] = ZSet.concat([totals[view], delta], delta.types).consolidate()
        out.append(dict(totals))
    return out


def jsonl_text(run: ScriptRun) -> str:
    """All steps' deltas as `dbspc run --output jsonl` prints them (views by name)."""
    lines: list[str] = []
    for number, deltas in enumerate(run.outputs, start=1):
        for view in sorted(deltas):
            lines.extend(jsonl_lines(number, view, deltas[view]))
    return "".join(line + "\n" for line in lines)


def oracle_disagreement(run: ScriptRun, oracle: str, spark: Any = None) -> str | None:
    """Where the oracle's recomputation differs from the integrated outputs, or None."""
    from dbspc.runtime.oracle import assert_same_rows, duckdb_views, spark_views

    recompute: Callable[[dict[str, ZSet]], dict[str, Any]]
    if oracle == "spark":
        recompute = lambda tables: spark_views(spark, run, tables)  # noqa: E731
    else:
        recompute = lambda tables: duckdb_views(run, tables)  # noqa: E731
    for number, (views, tables) in enumerate(zip(integrated_outputs(run), run.tables, strict=True), start=1):
        expected = recompute(tables)
        for view, contents in views.items():
            if not contents.is_positive():
                return f"step {number}: view {view} has a negative weight"
            try:
                assert_same_rows(contents, expected[view], f"step {number}, view {view} vs {oracle}")
            except AssertionError as e:
                return str(e)
    return None


def check(
    path: Path, *, update: bool = False, oracle: str = "duckdb", dialect: str = "spark", spark: Any = None
) -> Outcome:
    """Run one golden script and compare (or, with `update`, rewrite) its goldens."""
    try:
        run = run_script(source_text(path.read_bytes()), dialect, keep_tables=update)
    except DbspcError as e:
        return Outcome(path, False, e.located(str(path)))
    actual = {".out": jsonl_text(run), ".circuit": to_text(run.pipeline.circuit)}
    if update:
        problem = oracle_disagreement(run, oracle, spark)
        if problem is not None:
            return Outcome(path, False, f"not updated: the {oracle} oracle disagrees with dbspc: {problem}")
        written = []
        for suffix, text in actual.items():
            golden = path.with_suffix(suffix)
            if suffix == ".circuit" and not golden.exists():
                continue  # a circuit golden is opted into by creating the file
            if not golden.exists() or golden.read_text() != text:
                golden.write_text(text)
                written.append(golden.name)
        return Outcome(path, True, "updated " + ", ".join(written) if written else "", tuple(written))
    diffs = []
    for suffix, text in actual.items():
        golden = path.with_suffix(suffix)
        if not golden.exists():
            if suffix == ".out":
                diffs.append(f"{golden} is missing; create it with `dbspc test --update {path}`\n")
            continue
        diff = golden_diff(golden.read_text(), text, str(golden))
        if diff:
            diffs.append(diff)
    return Outcome(path, not diffs, "".join(diffs))


def golden_diff(expected: str, actual: str, name: str) -> str:
    """A unified diff from the golden `name` to what the script gives now ("" if equal)."""
    if expected == actual:
        return ""
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile=f"{name} (golden)",
        tofile=f"{name} (now)",
    )
    return "".join(lines)

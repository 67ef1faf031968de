"""dbspc: compile SQL views to incremental DBSP circuits and run them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import click

from dbspc.compiler.deep_stack import deep
from dbspc.compiler.errors import DbspcError, InputError, Span, SparkExtension, collecting_extensions, source_text

T = TypeVar("T")
DIALECT = click.option("--dialect", default="spark", show_default=True, help="SQL dialect of the input (sqlglot name).")


def _read(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise click.ClickException(f"cannot read {path}: {e.strerror}") from None
    try:
        return source_text(data)
    except InputError as e:
        click.echo(e.located(path), err=True)
        sys.exit(1)


def _guarded(filename: str, action: Callable[[], T], step_span: Span | None = None, step: int = 0) -> T:
    """Report user errors as `file:line:col: error: ...` and exit 1, without a traceback.

    An error of a step's data (no SQL position of its own) points at its `-- step` line."""
    try:
        return _reporting_extensions(filename, action)
    except DbspcError as e:
        if e.span is None and step_span is not None:
            e = type(e)(f"step {step} rejected: {e.message}", step_span)
        _report(filename, e)
        sys.exit(1)


def _reporting_extensions(filename: str, action: Callable[[], T]) -> T:
    """`action()`, with each SparkExtension it warns of reported positioned in `filename`."""
    result, extensions = collecting_extensions(action)
    for extension in extensions:
        _report(filename, extension)
    return result


def _report(filename: str, e: DbspcError | SparkExtension) -> None:
    """The positioned error (or warning) line, then the source line with a caret and any
    hint; colours only when stderr is a terminal."""
    color = sys.stderr.isatty()
    error = isinstance(e, DbspcError)
    head = e.located(filename)
    click.echo(click.style(head, fg="red" if error else "yellow", bold=True) if color else head, err=True)
    try:
        source = Path(filename).read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    for line in DbspcError(e.message, e.span).excerpt(source):
        click.echo(click.style(line, fg="cyan") if color and line.rstrip().endswith("^") else line, err=True)
    hint = e.hint() if isinstance(e, DbspcError) else None
    if hint:
        click.echo(f"hint: {hint}", err=True)


class _Progress:
    """A one-line progress display on stderr: items done of all, rate and ETA; lines
    printed meanwhile go above it."""

    def __init__(self, what: str) -> None:
        import time

        self.what, self.clock, self.start, self.shown = what, time.perf_counter, time.perf_counter(), False

    def update(self, done: int, total: int, current: str) -> None:
        elapsed = self.clock() - self.start
        rate = done / elapsed if elapsed > 0 and done else 0.0
        eta = f"{(total - done) / rate:.0f}s" if rate else "?"
        line = f"{self.what}: {done}/{total} ({rate:.2f}/s, ETA {eta}) {Path(current).name if current else ''}"
        click.echo("\r\033[K" + line, nl=False, err=True)
        self.shown = done < total
        if not self.shown:
            click.echo("\r\033[K", nl=False, err=True)

    def echo(self, message: str) -> None:
        if self.shown:
            click.echo("\r\033[K", nl=False, err=True)
        click.echo(message)


def _apply(pipeline: Any, step_text: str) -> Any:
    """One `-- step` of a script applied to its pipeline: the views' deltas."""
    from dbspc.runtime.script import step_changes

    return pipeline.step(step_changes(pipeline, step_text))


def _warn_parse_only(filename: str, dialect: str) -> None:
    """A dialect without its own evaluation rules is said so, never silently mixed with Spark's."""
    from dbspc.compiler.dialect import semantics_of

    semantics = _guarded(filename, lambda: semantics_of(dialect))
    warning = semantics.parse_only_warning()
    if warning:
        click.echo(warning, err=True)


@click.group()
@click.version_option(package_name="dbspc", prog_name="dbspc")
def main() -> None:
    """Compile SQL views into incremental DBSP circuits and maintain them.

    \b
    Examples:
      dbspc compile examples/orders.sql
      dbspc compile --format svg examples/orders.sql
      dbspc explain examples/orders.sql
      dbspc run examples/orders.sql
      dbspc test examples/goldens"""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@DIALECT
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "dot", "svg", "html"]),
    default="text",
    show_default=True,
    help="svg: a picture; html: one page with the picture, the costs and the lifted circuit.",
)
@click.option("--non-incremental", is_flag=True, help="Print the lifted circuit, before incrementalization.")
@click.option("--no-report", is_flag=True, help="Omit the incrementality report after a text dump.")
@click.option(
    "--distributed",
    is_flag=True,
    help="End with the distributed plan: stages, exchanges and how each operator's state is partitioned.",
)
def compile(file: str, dialect: str, fmt: str, non_incremental: bool, no_report: bool, distributed: bool) -> None:
    """Print the circuit of every view in FILE, with its state and cost per change."""
    from dbspc.compiler.circuit.dump import to_dot, to_json, to_text
    from dbspc.compiler.circuit.report import to_report
    from dbspc.compiler.compile import compile_sql
    from dbspc.compiler.frontend.script_split import split_script

    text = split_script(_read(file)).program
    _warn_parse_only(file, dialect)
    compiled = _guarded(file, lambda: compile_sql(text, dialect, incremental=not non_incremental))
    if fmt == "html":
        from dbspc.compiler.circuit.picture import to_html

        lifted = _guarded(file, lambda: compile_sql(text, dialect, incremental=False))
        page = deep(lambda: to_html(compiled.circuit, lifted.circuit, f"dbspc: {Path(file).name}"))
        click.echo(page, nl=False)
        return
    from dbspc.compiler.circuit.picture import to_svg

    render = {"text": to_text, "json": to_json, "dot": to_dot, "svg": to_svg}[fmt]
    click.echo(_guarded(file, lambda: deep(lambda: render(compiled.circuit))), nl=False)
    if fmt == "text" and not no_report:
        click.echo(_guarded(file, lambda: deep(lambda: to_report(compiled.circuit))), nl=False)
    if distributed:
        from dbspc.runtime.distributed.plan import plan

        click.echo(_guarded(file, lambda: plan(compiled.circuit).dump()), nl=False)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@DIALECT
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 2 if any view's cost per change grows with its state: a whole group or partition re-read "
    "(MIN/MAX/DISTINCT aggregates, collect_list, windows) or a recomputation (a cross join).",
)
def explain(file: str, dialect: str, fmt: str, strict: bool) -> None:
    """Per view in FILE: its operators, their state and cost per change, and a verdict.

    \b
    Example:
      dbspc explain examples/orders.sql
      dbspc explain --strict --format json examples/goldens/revenue.sql
    """
    from dbspc.compiler.circuit.explain import to_json_report, to_text_report, view_costs
    from dbspc.compiler.compile import compile_sql
    from dbspc.compiler.frontend.script_split import split_script

    text = split_script(_read(file)).program
    _warn_parse_only(file, dialect)
    compiled = _guarded(file, lambda: compile_sql(text, dialect, incremental=True))
    views = _guarded(file, lambda: deep(lambda: view_costs(compiled.circuit)))
    click.echo(to_json_report(views) if fmt == "json" else to_text_report(views), nl=False)
    costly = [v for v in views if v.grows != "change"]
    if strict and costly:
        for v in costly:
            click.echo(f"{file}: error: view {v.name}: {v.verdict}", err=True)
        sys.exit(2)


@main.command("test")
@click.argument("target", type=click.Path(exists=True))
@DIALECT
@click.option("--update", is_flag=True, help="Rewrite the goldens, but only where the oracle agrees.")
@click.option("--oracle", type=click.Choice(["duckdb", "spark"]), default="duckdb", show_default=True)
def test_goldens(target: str, dialect: str, update: bool, oracle: str) -> None:
    """Run a team's golden scripts: each TARGET/*.sql against its .out (and .circuit).

    \b
    Example:
      dbspc test examples/goldens

    --update creates or blesses goldens, only where the oracle agrees; without it, a
    changed golden prints a unified diff and the exit code is 1.
    """
    from dbspc.runtime.goldens import check, golden_paths

    paths = golden_paths(Path(target))
    if not paths:
        raise click.ClickException(f"no .sql scripts under {target}")
    spark = None
    if update and oracle == "spark":
        from dbspc.runtime.spark.session import local_session

        spark = local_session(app="dbspc-test")
    failed = 0
    for path in paths:
        outcome = _reporting_extensions(
            str(path), partial(check, path, update=update, oracle=oracle, dialect=dialect, spark=spark)
        )
        failed += not outcome.ok
        status = "ok" if outcome.ok else "FAIL"
        click.echo(f"{status:4}  {path}" + (f"  ({outcome.message})" if outcome.ok and outcome.message else ""))
        if not outcome.ok:
            click.echo(outcome.message.rstrip("\n"), err=True)
    click.echo(f"{len(paths) - failed} passed, {failed} failed")
    if failed:
        sys.exit(1)


@main.command()
@click.argument("script", type=click.Path(dir_okay=False))
@DIALECT
@click.option(
    "--output",
    type=click.Choice(["table", "jsonl", "csv", "parquet"]),
    default="table",
    show_default=True,
    help="csv/parquet: one file per view (step, weight, then its columns) under --out.",
)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None, help="Directory for csv/parquet.")
@click.option("--non-incremental", is_flag=True, help="Recompute every view from scratch at each step.")
@click.option(
    "--max-iterations",
    type=click.IntRange(min=1),
    default=None,
    help="Fail a step whose recursive CTE needs more inner iterations than this.",
)
@click.option("--state", is_flag=True, help="End with the rows and bytes of state each operator holds.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line (shown only on a terminal anyway).")
def run(
    script: str,
    dialect: str,
    output: str,
    out_dir: str | None,
    non_incremental: bool,
    max_iterations: int | None,
    state: bool,
    quiet: bool,
) -> None:
    """Run SCRIPT's steps and print each step's output delta per view.

    \b
    Example:
      dbspc run examples/orders.sql
      dbspc run --output jsonl examples/orders.sql
    """
    from dbspc.compiler.frontend.script_split import split_script
    from dbspc.runtime.pipeline import Pipeline
    from dbspc.runtime.render import jsonl_lines, state_lines, state_sizes, table_lines

    parts = split_script(_read(script))
    from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS

    limit = max_iterations or DEFAULT_MAX_ITERATIONS
    _warn_parse_only(script, dialect)
    pipeline = _guarded(script, lambda: Pipeline.from_sql(parts.program, dialect, not non_incremental, limit))
    files = output in ("csv", "parquet")
    collected: dict[str, list[Any]] = {v: [] for v in pipeline.view_names()}
    bar = _Progress("steps") if sys.stderr.isatty() and not quiet and len(parts.steps) > 1 else None
    echo = bar.echo if bar else click.echo
    for number, step_text in enumerate(parts.steps, start=1):
        if bar:
            bar.update(number - 1, len(parts.steps), script)
        marker = Span(parts.step_lines[number - 1], 1)
        deltas = _guarded(script, partial(_apply, pipeline, step_text), marker, number)
        for view in sorted(deltas):
            if files:
                collected[view].append((number, deltas[view]))
                continue
            if output == "jsonl":
                lines = jsonl_lines(number, view, deltas[view])
            else:
                lines = table_lines(number, view, pipeline.view_columns(view), deltas[view])
            for line in lines:
                echo(line)
    if bar:
        bar.update(len(parts.steps), len(parts.steps), "")
    if files:
        from dbspc.runtime.render import write_deltas

        target = Path(out_dir) if out_dir else Path(script).with_suffix("").with_name(Path(script).stem + "-deltas")
        for path in write_deltas(target, output, {v: (pipeline.view_columns(v), d) for v, d in collected.items()}):
            click.echo(f"wrote {path}")
    if state:
        sizes = state_sizes(pipeline.executor.circuit, pipeline.executor.state_sizes())
        # a table no operator integrates whole is also held by the pipeline (delete checks)
        sizes.update({f"table {t} (whole-row index)": (len(x), x.nbytes()) for t, x in pipeline.tables_apart().items()})
        for line in state_lines(sizes):
            click.echo(line)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--verbose", "-v", is_flag=True, help="Print every query that is not passed.")
@click.option("--limit", type=int, default=None, help="Stop after this many queries per file.")
@click.option(
    "--size-limit",
    type=int,
    default=5_000_000,
    show_default=True,
    help="Stop a query whose intermediate result exceeds this many values (rows x columns).",
)
@click.option("--memory-mb", type=int, default=6144, show_default=True, help="Address-space cap of a file's process.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds one record may take.")
@click.option("--check-inputs", is_flag=True, help="Check every step's changes as Pipeline.step does (slower).")
@click.option("--in-process", is_flag=True, help="Run files in this process (no crash isolation).")
@click.option("--table", is_flag=True, help="End with a Markdown table of the files' counts (docs/conformance.md).")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Files run at once, each in its own process [the number of CPUs; 1 with --in-process].",
)
def slt(
    paths: tuple[str, ...],
    verbose: bool,
    limit: int | None,
    size_limit: int,
    memory_mb: int,
    timeout: float,
    check_inputs: bool,
    in_process: bool,
    table: bool,
    quiet: bool,
    jobs: int | None,
) -> None:
    """Run sqllogictest files, each query as an incremental view fed in several steps.

    On a terminal a progress line (files done, rate, ETA) stays at the bottom; --quiet,
    or output that is not a terminal, drops it."""
    from dbspc.slt.incremental import Limits
    from dbspc.slt.records import find_test_files
    from dbspc.slt.runner import run_paths

    for path in find_test_files(paths):  # a missing or unreadable file stops the run before it starts
        _read(path)

    if in_process and jobs not in (None, 1):
        raise click.UsageError("--jobs runs files in their own processes: it cannot be used with --in-process")
    jobs = 1 if in_process else jobs or os.cpu_count() or 1
    limits = Limits(size_limit=size_limit, memory_mb=memory_mb, record_timeout=timeout, check_inputs=check_inputs)
    bar = _Progress("slt files") if sys.stderr.isatty() and not quiet else None
    totals = run_paths(
        list(paths),
        verbose=verbose,
        limit=limit,
        echo=bar.echo if bar else click.echo,
        isolate=not in_process,
        limits=limits,
        table=table,
        progress=bar.update if bar else None,
        jobs=jobs,
    )
    if totals.wrong:
        sys.exit(1)


@main.group()
def pipelines() -> None:
    """Spark Declarative Pipelines projects, their materialized views maintained by dbspc."""


@pipelines.command("refresh")
@click.argument("project", type=click.Path(exists=True))
@click.option("--checkpoint", type=click.Path(file_okay=False), help="dbspc's checkpoint [<spec storage>/dbspc].")
@click.option("--output", type=click.Path(file_okay=False), help="Where view tables are written [under the warehouse].")
@click.option("--warehouse", type=click.Path(file_okay=False), help="spark.sql.warehouse.dir of the local session.")
@click.option(
    "--metastore",
    type=click.Path(file_okay=False),
    help="A local session's Hive catalog (Derby) directory, so tables persist between runs.",
)
@click.option("--change-feed", "feeds", multiple=True, metavar="TABLE=SOURCE", help="Read TABLE's change feed SOURCE.")
@click.option("--append", "appends", multiple=True, metavar="TABLE=OFFSET", help="TABLE is append-only, by OFFSET.")
@click.option("--skip-unsupported", is_flag=True, help="Leave what dbspc cannot maintain to spark-pipelines.")
@click.option("--replace", is_flag=True, help="Take over existing tables of the views' names.")
@click.option(
    "--execution",
    type=click.Choice(["driver", "distributed"]),
    default="driver",
    show_default=True,
    help="distributed: the state partitioned into buckets on the executors (docs/distributed.md).",
)
@click.option("--buckets", type=int, default=8, show_default=True, help="State buckets of --execution distributed.")
def pipelines_refresh(
    project: str,
    checkpoint: str | None,
    output: str | None,
    warehouse: str | None,
    metastore: str | None,
    feeds: tuple[str, ...],
    appends: tuple[str, ...],
    skip_unsupported: bool,
    replace: bool,
    execution: str,
    buckets: int,
) -> None:
    """One incremental refresh of the CREATE MATERIALIZED VIEWs of the SDP project PROJECT
    (its directory or spark-pipeline.yml), published as the spec's <database>.<view>.
    Sources are plain tables (diffed by snapshot) unless given with --append or
    --change-feed (a Delta-style change feed standing for the table). Runs in the
    active SparkSession if there is one (inside a job), else in a local one."""
    import re

    from dbspc.runtime.refresh.sources import AppendTable, ChangeTable
    from dbspc.runtime.spark.declarative import (
        DeclarativePipeline,
        check_maintainable,
        default_checkpoint,
        load_project,
    )

    def pairs(values: tuple[str, ...], option: str) -> list[tuple[str, str]]:
        if not all("=" in v for v in values):
            raise click.UsageError(f"{option} takes TABLE=NAME")
        return [(t.strip(), n.strip()) for t, n in (v.split("=", 1) for v in values)]

    sources: dict[str, object] = {
        t: ChangeTable(t, "_commit_version", op="_change_type", source=s) for t, s in pairs(feeds, "--change-feed")
    }
    sources.update({t: AppendTable(t, offset) for t, offset in pairs(appends, "--append")})

    def refresh() -> None:
        loaded = load_project(project)
        check_maintainable(loaded, skip_unsupported)  # before starting Spark
        where = checkpoint or default_checkpoint(loaded.spec)
        if where is None:
            raise click.UsageError(f"the spec's storage {loaded.spec.storage} is not local: give --checkpoint")
        from pyspark.sql import SparkSession

        from dbspc.runtime.spark.session import local_session

        spark = SparkSession.getActiveSession()
        if spark is None:
            spark = local_session("dbspc-pipelines", warehouse, metastore=metastore)
        for key, value in loaded.spec.configuration.items():
            spark.conf.set(key, value)
        job = DeclarativePipeline(
            spark,
            loaded,
            where,
            sources=sources,
            skip_unsupported=skip_unsupported,
            replace=replace,
            output=output,
            execution=execution,
            buckets=buckets,
        )
        for item in job.unsupported:
            click.echo(f"skipped: {item}", err=True)
        result = job.refresh()
        state = "committed" if result.committed else "no changes"
        click.echo(f"pipeline {loaded.spec.name}: refresh {result.refresh_id} ({state}), rows read {result.rows_read}")
        for view in job.project.views:
            changed = result.rows_out.get(view.name.lower(), 0)
            click.echo(f"  {job.table_name(view.name)}: {changed} changed row(s)")
        job.close()

    try:
        refresh()
    except DbspcError as e:
        # an error placed in a library file ("file:line:col: ...") is shown with its line
        placed = re.match(r"([^\n]+?):(\d+):(\d+): (.*)", e.message, re.S)
        if e.span is None and placed and Path(placed[1]).is_file():
            _report(placed[1], type(e)(placed[4], Span(int(placed[2]), int(placed[3]))))
        else:
            click.echo(f"error: {e}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

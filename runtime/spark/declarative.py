"""A Spark Declarative Pipelines project's SQL materialized views, maintained by dbspc.

    job = DeclarativePipeline(spark, "examples/declarative", "checkpoints/shop")
    job.refresh()        # one incremental refresh of every CREATE MATERIALIZED VIEW

`spark-pipelines run` recomputes a MATERIALIZED VIEW in full on every run; here the same
project (its `spark-pipeline.yml` and the .sql files of its `libraries`) is read, and its
materialized views are registered, with their own SQL text, in a `SparkPipeline`: each
refresh reads only the sources' changes. The tables they read that are not materialized
views of the project are the sources: plain tables, diffed by snapshot, unless given in
`sources=` (an append-only table, or a change table or feed standing for the table); the
views are published as `<catalog>.<database>.<view>` per the spec. What dbspc does not
maintain (streaming tables, flows, temporary and persisted views, SET/USE, Python files)
is refused by name, or with `skip_unsupported=True` left to spark-pipelines
(docs/spark.md, "Spark Declarative Pipelines").

Reading the spec needs PyYAML, as spark-pipelines does. pyspark's own parser
(`pyspark.pipelines.cli`) cannot be reused: importing it imports the whole Spark Connect
client (grpcio, ...), so its rules (fields, required name and storage, `schema` as an
alias of `database`, the two allowed glob forms) are applied here.
"""

from __future__ import annotations

import dataclasses
import glob
import graphlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from dbspc.compiler.errors import DbspcError, SqlError, UsageError
from dbspc.compiler.frontend.positions import line_col

SPEC_FILE_NAMES = ("spark-pipeline.yaml", "spark-pipeline.yml")
_FIELDS = {"name", "storage", "catalog", "database", "schema", "configuration", "libraries"}
_REQUIRED = ("name", "storage")


@dataclass(frozen=True)
class ProjectSpec:
    """The fields of a spark-pipeline.yml that matter here (as pyspark's PipelineSpec)."""

    path: Path
    name: str
    storage: str
    catalog: str | None = None
    database: str | None = None
    configuration: Mapping[str, str] = field(default_factory=dict)
    libraries: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def prefix(self) -> str:
        """Where the views are published: "<catalog>.<database>." (SDP's defaults)."""
        if self.catalog:
            return f"{self.catalog}.{self.database or 'default'}."
        return f"{self.database}." if self.database else ""


@dataclass(frozen=True)
class Dataset:
    """A statement of a library file: its kind, name and place (1-based line, column)."""

    file: Path
    line: int
    col: int
    kind: str
    name: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class View(Dataset):
    """A CREATE MATERIALIZED VIEW: `text` is the statement preceded by blanks standing
    for the start of its first line, so that columns in errors are the file's."""

    text: str = ""
    reads: tuple[str, ...] = ()  # table names as written (possibly qualified)


@dataclass(frozen=True)
class Unsupported(Dataset):
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} '{self.name}': {self.reason}"


@dataclass
class Project:
    spec: ProjectSpec
    views: list[View]  # in dependency order: a view after every view it reads
    unsupported: list[Unsupported]

    def sources(self) -> dict[str, View]:
        """Each table read that is not a view of the project, with the first view reading it."""
        names = {v.name.lower() for v in self.views}
        found: dict[str, View] = {}
        seen: set[str] = set()
        for view in self.views:
            for table in view.reads:
                if table.lower() not in names and table.lower() not in seen:
                    seen.add(table.lower())
                    found[table] = view
        return found


# -- the spec ------------------------------------------------------------------------------


def find_spec(project: str | Path) -> Path:
    """The spec file: `project` itself, or the one spark-pipeline.yml/.yaml in it."""
    path = Path(project)
    if path.is_file():
        return path
    found = [path / name for name in SPEC_FILE_NAMES if (path / name).is_file()]
    if len(found) != 1:
        what = "both spark-pipeline.yaml and spark-pipeline.yml" if found else "no spark-pipeline.yml (or .yaml)"
        raise UsageError(f"{path}: {what}; give the directory of one pipeline project or its spec file")
    return found[0]


def load_spec(path: str | Path) -> ProjectSpec:
    try:
        import yaml
    except ImportError:
        raise UsageError(
            "reading a spark-pipeline.yml needs PyYAML, as spark-pipelines does: pip install pyyaml"
        ) from None
    spec_path = Path(path)
    try:
        data = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"cannot read {spec_path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise UsageError(f"{spec_path}: not valid YAML: {e}") from None
    return unpack_spec(spec_path, data)


def unpack_spec(path: Path, data: Any) -> ProjectSpec:
    """pyspark.pipelines.cli's rules for a spec's fields."""
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a pipeline spec is a mapping of fields (name, storage, libraries, ...)")
    for key in data:
        if key not in _FIELDS:
            raise UsageError(f"{path}: unexpected field '{key}' (allowed: {', '.join(sorted(_FIELDS))})")
    for key in _REQUIRED:
        if key not in data:
            raise UsageError(f"{path}: missing required field '{key}'")
    configuration = data.get("configuration") or {}
    if not isinstance(configuration, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in configuration.items()
    ):
        raise UsageError(f"{path}: 'configuration' must map strings to strings")
    libraries = []
    for entry in data.get("libraries") or []:
        try:
            include = entry["glob"]["include"]
        except (TypeError, KeyError):
            raise UsageError(f"{path}: each entry of 'libraries' is '- glob: {{include: PATTERN}}'") from None
        libraries.append(_glob_pattern(path, str(include)))
    database = data.get("database", data.get("schema"))
    return ProjectSpec(
        path,
        str(data["name"]),
        str(data["storage"]),
        None if data.get("catalog") is None else str(data["catalog"]),
        None if database is None else str(database),
        dict(configuration),
        tuple(libraries),
    )


def default_checkpoint(spec: ProjectSpec) -> Path | None:
    """<storage>/dbspc when the spec's storage is a local directory (SDP keeps its own
    checkpoints under storage too); None for a remote one (dbspc's must be local)."""
    storage = spec.storage.removeprefix("file://").removeprefix("file:")
    if "://" in storage:
        return None
    return spec.root / storage / "dbspc"


def _glob_pattern(path: Path, pattern: str) -> str:
    """A file path, or a folder ending in /** (everything under it), as spark-pipelines allows."""
    if not glob.has_magic(pattern):
        return pattern
    if pattern.endswith("/**") and not glob.has_magic(pattern[:-3]):
        return pattern + "/*"
    raise UsageError(f"{path}: library glob '{pattern}' is neither a file path nor a folder ending in /**")


def library_files(spec: ProjectSpec) -> list[Path]:
    """The files the spec's libraries name, in a stable order (spark-pipelines' order is
    the file system's; the order of definitions does not matter to either)."""
    files: list[Path] = []
    for pattern in spec.libraries:
        for file in sorted(spec.root.glob(pattern)):
            if file.is_file() and "__pycache__" not in file.parts and file not in files:
                files.append(file)
    return files


# -- the SQL files -------------------------------------------------------------------------


def load_project(project: str | Path) -> Project:
    """The spec, its materialized views in dependency order and what dbspc cannot maintain."""
    spec = load_spec(find_spec(project))
    views: list[View] = []
    unsupported: list[Unsupported] = []
    for file in library_files(spec):
        if file.suffix == ".py":
            reason = "a Python file: its datasets are defined by running it; left to spark-pipelines"
            unsupported.append(Unsupported(file, 1, 1, "Python file", file.name, reason))
        elif file.suffix == ".sql":
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise UsageError(f"cannot read {file}: {e}") from None
            for item in statements(file, text):
                if isinstance(item, View):
                    views.append(item)
                else:
                    unsupported.append(item)
        else:
            raise UsageError(f"{file}: a library file must be .sql or .py, as spark-pipelines requires")
    return Project(spec, ordered(views), unsupported)


def statements(file: Path, text: str) -> list[View | Unsupported]:
    """Each statement of a SQL file, classified; a materialized view keeps its text."""
    try:
        tokens = sqlglot.Dialect.get_or_raise("spark").tokenize(text)
    except SqlglotError as e:
        raise SqlError(f"{file}: {e}") from None
    found: list[View | Unsupported] = []
    current: list[Token] = []
    for token in [*tokens, None]:
        if token is not None and token.token_type != TokenType.SEMICOLON:
            current.append(token)
            continue
        if current:
            found.append(_statement(file, text, current))
        current = []
    return found


_UNSUPPORTED = {
    "STREAMING TABLE": "a streaming table is appended to by streaming flows; left to spark-pipelines",
    "FLOW": "a flow writes into a streaming table; left to spark-pipelines",
    "TEMPORARY VIEW": "a temporary view exists only within a spark-pipelines run; inline it into the views",
    "VIEW": "a persisted view is not materialized; left to spark-pipelines",
}


def _statement(file: Path, text: str, tokens: list[Token]) -> View | Unsupported:
    words = [t.text.upper() for t in tokens]
    line, col = line_col(text, tokens[0].start)
    rest = words[1:]
    if words[0] == "CREATE" and rest[:2] in (["OR", "REFRESH"], ["OR", "REPLACE"]):
        rest = rest[2:]
    if rest[:1] == ["TEMP"]:
        rest = ["TEMPORARY", *rest[1:]]
    kind = next((k for k in ("MATERIALIZED VIEW", *_UNSUPPORTED) if rest[: k.count(" ") + 1] == k.split()), None)
    if words[0] != "CREATE" or kind is None:
        what = " ".join(words[:2])
        reason = "only CREATE MATERIALIZED VIEW statements are maintained by dbspc"
        return Unsupported(file, line, col, "statement", what, reason)
    at = 1 + (len(words) - 1 - len(rest)) + kind.count(" ") + 1
    if words[at : at + 3] == ["IF", "NOT", "EXISTS"]:
        at += 3
    name_tokens = _name(tokens[at:])
    name = ".".join(t.text for t in name_tokens) or "?"
    if kind != "MATERIALIZED VIEW":
        return Unsupported(file, line, col, kind.lower(), name, _UNSUPPORTED[kind])
    if len(name_tokens) != 1:
        where = line_col(text, tokens[at].start) if at < len(tokens) else (line, col)
        raise SqlError(
            f"{file}:{where[0]}:{where[1]}: materialized view '{name}': name it without a qualifier "
            "(the spec's catalog and database say where it is published)"
        )
    start_of_line = text.rfind("\n", 0, tokens[0].start) + 1
    body = " " * (tokens[0].start - start_of_line) + text[tokens[0].start : tokens[-1].end + 1]
    # SDP's CREATE OR REFRESH means what CREATE OR REPLACE means to dbspc: blank it.
    if words[1:3] == ["OR", "REFRESH"]:
        cut = tokens[1].start - start_of_line, tokens[2].end + 1 - start_of_line
        body = body[: cut[0]] + " " * (cut[1] - cut[0]) + body[cut[1] :]
    return View(file, line, col, "materialized view", name_tokens[0].text, body, _reads(body))


def _name(tokens: list[Token]) -> list[Token]:
    """A possibly qualified name: name (. name)*."""
    parts: list[Token] = []
    for i, token in enumerate(tokens):
        if i % 2 == 1:
            if token.token_type != TokenType.DOT:
                break
        elif token.token_type in (TokenType.ALIAS, TokenType.L_PAREN):
            break
        else:
            parts.append(token)
    return parts


def _reads(sql: str) -> tuple[str, ...]:
    """The tables a view reads (its CTEs excluded). A statement that does not parse reads
    nothing here; registering it reports the error at its place."""
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except SqlglotError:
        return ()
    query = tree.expression if isinstance(tree, exp.Create) else None
    if not isinstance(query, exp.Expr):
        return ()
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    names: list[str] = []
    for table in query.find_all(exp.Table):
        if not table.name or (not table.db and table.name.lower() in ctes):
            continue
        name = ".".join(p for p in (table.catalog, table.db, table.name) if p)
        if name not in names:
            names.append(name)
    return tuple(names)


def ordered(views: list[View]) -> list[View]:
    """Views after the views they read, as SDP resolves its graph; otherwise in file order."""
    by_name: dict[str, View] = {}
    for view in views:
        if view.name.lower() in by_name:
            first = by_name[view.name.lower()]
            raise SqlError(f"{view.where}: materialized view '{view.name}' is also defined at {first.where}")
        by_name[view.name.lower()] = view
    graph = graphlib.TopologicalSorter(
        {v.name.lower(): [r.lower() for r in v.reads if r.lower() in by_name] for v in views}
    )
    try:
        order = list(graph.static_order())
    except graphlib.CycleError as e:
        cycle = [by_name[n] for n in e.args[1]]
        names = " -> ".join(v.name for v in cycle)
        raise SqlError(f"{cycle[0].where}: materialized views read each other in a cycle: {names}") from None
    # Any topological order would do; sorting on depth keeps file order among views that
    # do not depend on each other, so the program (and its checkpoint) is stable.
    depth: dict[str, int] = {}
    for name in order:
        deps = [r.lower() for r in by_name[name].reads if r.lower() in by_name]
        depth[name] = 1 + max((depth[d] for d in deps), default=-1)
    return sorted(views, key=lambda v: depth[v.name.lower()])


def check_maintainable(project: Project, skip_unsupported: bool = False) -> None:
    """Refuse a project with definitions dbspc does not maintain (each named, with its
    place and why), unless they are to be skipped; and one with no view at all."""
    if project.unsupported and not skip_unsupported:
        listed = "\n  ".join(str(u) for u in project.unsupported)
        raise UsageError(
            f"pipeline '{project.spec.name}' has definitions dbspc does not maintain:\n  {listed}\n"
            "remove them, or skip them (skip_unsupported=True, --skip-unsupported) and run them with "
            "spark-pipelines"
        )
    if not project.views:
        raise UsageError(f"pipeline '{project.spec.name}' has no CREATE MATERIALIZED VIEW in its libraries")


# -- maintaining them ----------------------------------------------------------------------


class DeclarativePipeline:
    """The materialized views of an SDP project, refreshed incrementally by a SparkPipeline.

    - `project`: the project directory, its spec file, or a loaded `Project`.
    - `sources`: table name -> `ChangeTable`/`AppendTable`/`PlainTable` for tables whose
      kind cannot be seen from their columns (their `source` defaults to the table in
      the spec's database).
    - `skip_unsupported`: leave what dbspc cannot maintain to spark-pipelines (listed in
      `unsupported`) instead of refusing the project.
    - other keyword arguments go to `SparkPipeline` (`output`, `change_log`, `replace`, ...).
    """

    def __init__(
        self,
        spark: Any,
        project: str | Path | Project,
        checkpoint: str | Path,
        *,
        sources: Mapping[str, Any] | None = None,
        skip_unsupported: bool = False,
        **options: Any,
    ) -> None:
        self.spark = spark
        self.project = project if isinstance(project, Project) else load_project(project)
        self.unsupported = self.project.unsupported
        check_maintainable(self.project, skip_unsupported)
        self.checkpoint = checkpoint
        self.explicit = dict(sources or {})
        self.options = options
        self._job: Any = None

    @property
    def prefix(self) -> str:
        return self.project.spec.prefix

    def table_name(self, view: str) -> str:
        """The catalog table a view is published as."""
        return self.prefix + view

    @property
    def job(self) -> Any:
        """The SparkPipeline (built at first use: sources need the catalog's schemas)."""
        if self._job is None:
            self._job = self._build()
        return self._job

    def _build(self) -> Any:
        from dbspc.runtime.refresh.sources import PlainTable
        from dbspc.runtime.spark.spark_pipeline import SparkPipeline, _quote

        if self.prefix:
            self.spark.sql(f"CREATE DATABASE IF NOT EXISTS {_quote(self.prefix[:-1])}")
        job = SparkPipeline(self.spark, self.checkpoint, view_prefix=self.prefix, **self.options)
        unknown = sorted(set(self.explicit) - {t.lower() for t in self.project.sources()} - set(self.project.sources()))
        if unknown:
            raise UsageError(f"sources given for tables no materialized view reads: {', '.join(unknown)}")
        for table, reader in self.project.sources().items():
            qualified = table if "." in table else self.prefix + table
            name = table.rsplit(".", 1)[-1]
            given = self.explicit.get(table, self.explicit.get(name))
            if given is not None:
                job.source(dataclasses.replace(given, table=name, source=given.source or qualified))
                continue
            if not self.spark.catalog.tableExists(qualified):
                raise UsageError(
                    f"{reader.where}: materialized view '{reader.name}' reads '{table}', which is neither a "
                    f"materialized view of the project nor a table of the catalog ('{qualified}')"
                )
            # A table with a change feed's columns is still read as it is: the view's
            # SQL means its rows, as spark-pipelines reads them (see docs/spark.md).
            job.source(PlainTable(name, source=qualified))
        for view in self.project.views:
            try:
                job.view(view.text, origin=(str(view.file), view.line))
            except DbspcError as e:
                if e.span is None:
                    raise
                raise type(e)(f"{view.file}:{view.line + e.span.line - 1}:{e.span.col}: {e.message}") from None
        return job

    def refresh(self) -> Any:
        """One incremental refresh of every view (a RefreshResult)."""
        return self.job.refresh()

    def close(self) -> None:
        if self._job is not None:
            self._job.close()

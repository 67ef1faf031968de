"""One error hierarchy for everything a user can get wrong.

`DbspcError` is what the CLI reports as `file:line:col: error: message` and exit code 1.
`InternalCompilerError` is not a user error: it means an invariant of dbspc broke.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based position in a source file."""

    line: int
    col: int


class DbspcError(Exception):
    """Base of all user-facing errors; carries an optional source position."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span

    def located(self, filename: str) -> str:
        if self.span is None:
            return f"{filename}: error: {self.message}"
        return f"{filename}:{self.span.line}:{self.span.col}: error: {self.message}"

    def __str__(self) -> str:
        if self.span is None:
            return self.message
        return f"{self.span.line}:{self.span.col}: {self.message}"

    def excerpt(self, source: str) -> list[str]:
        """The source line the error points at, and a caret under its column, the way
        compilers show it; nothing when there is no position or no such line."""
        if self.span is None:
            return []
        lines = source.splitlines()
        if not 1 <= self.span.line <= len(lines):
            return []
        text = lines[self.span.line - 1].expandtabs(1)
        number = str(self.span.line)
        pad = " " * len(number)
        caret = " " * max(min(self.span.col, len(text) + 1) - 1, 0) + "^"
        return [f" {number} | {text}", f" {pad} | {caret}"]

    def hint(self) -> str | None:
        """What usually fixes this error, where that is known."""
        for pattern, hint in _HINTS:
            if pattern in self.message:
                return hint
        return None


# (a phrase of the message, the hint shown under it)
_HINTS = (
    ("table or view", "declare each table with CREATE TABLE before the views that read it"),
    ("cannot be resolved", "check the spelling, and that the column's table is in FROM (or qualify it)"),
    ("did not converge", "raise the limit with --max-iterations N, or check the recursion terminates"),
    ("cannot delete", "a step may delete only rows its table holds; check the -- step's rows"),
)


class SparkExtension(UserWarning):
    """A construct dbspc evaluates although Spark SQL refuses it, issued as a Python
    warning: the view is answered, but has no Spark answer to be checked against. The CLI
    prints it as `file:line:col: warning: ...`."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.span = span

    def located(self, filename: str) -> str:
        where = filename if self.span is None else f"{filename}:{self.span.line}:{self.span.col}"
        return f"{where}: warning: {self.message}"


def collecting_extensions(action: Callable[[], T]) -> tuple[T, list[SparkExtension]]:
    """`action()`'s result and the SparkExtensions it warned of, each once (a program
    compiled twice warns twice), for a caller that says them itself, where the user
    looks; other warnings pass on as they were."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", SparkExtension)
        result = action()
    extensions: list[SparkExtension] = []
    for w in said:
        if not isinstance(w.message, SparkExtension):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif all((e.message, e.span) != (w.message.message, w.message.span) for e in extensions):
            extensions.append(w.message)
    return result, extensions


class SqlError(DbspcError):
    """Malformed SQL, unknown names, type errors."""


class UnsupportedSql(DbspcError):
    """Valid SQL that dbspc refuses rather than answer wrongly."""


class RuntimeSqlError(DbspcError):
    """A step's data hit an error (division by zero, overflow, bad cast).

    The step is rejected and no state changes, as Spark rejects the query.
    """


class InputError(DbspcError):
    """A change batch that cannot be applied: deleting absent rows, wrong schema."""


class UsageError(DbspcError):
    """An API used wrongly: an unknown table or view, registering after the start, bad
    arguments, a checkpoint or output directory that belongs to another job."""


class InternalCompilerError(Exception):
    """A broken invariant inside dbspc; never the user's fault."""


def source_text(data: bytes) -> str:
    """A SQL file's bytes as text; not UTF-8 is an error at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x})", Span(line, col)) from None

"""Source positions of sqlglot nodes, for errors that point into the SQL."""

from __future__ import annotations

from sqlglot import exp

from dbspc.compiler.errors import Span

# How sqlglot fails, reading or printing a call it built from arguments of a kind it does
# not expect (`map(x)`, `next_value_for(x, x)`): the user's error, not dbspc's.
SQLGLOT_FAILURES = (TypeError, ValueError, AttributeError, KeyError, IndexError)


def span_of(node: exp.Expression | exp.Binary | exp.Query | None) -> Span | None:
    """The earliest token position inside `node`, as a 1-based line and column.

    sqlglot records positions on leaf tokens (identifiers, literals), with `col` at the
    token's last character; the start column is derived from `start` and `end`.
    """
    if node is None:
        return None
    best: tuple[int, int, int] | None = None
    for sub in node.walk():
        meta = getattr(sub, "_meta", None)
        if not meta or "line" not in meta:
            continue
        start = meta.get("start", 0)
        col = meta["col"] - (meta.get("end", start) - start)
        cand = (start, meta["line"], max(col, 1))
        if best is None or cand < best:
            best = cand
    return None if best is None else Span(best[1], best[2])


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of character `offset` of `text`."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def call_name(node: exp.Expression | exp.Func) -> str | None:
    """The function name as the user called it, lower-cased (recorded by the parser,
    program._record_source_names; `%` for a remainder written as an operator)."""
    meta = node._meta or {}
    name = meta.get("call_name") or meta.get("source_name")
    return name.lower() if isinstance(name, str) else None


def written_name(node: exp.Expression) -> str:
    """A call's name as the user wrote it, for errors (INSTR, DATE_SUB), not sqlglot's
    class (StrPosition, TsOrDsAdd)."""
    written = call_name(node)
    if written is not None and written.replace("_", "").isalnum():
        return written.upper()
    return node.sql_name() if hasattr(node, "sql_name") else type(node).__name__.upper()

"""Parse a program (CREATE TABLE and CREATE VIEW statements) into bound views."""

from __future__ import annotations

import functools
import itertools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, ParseError, SchemaError, TokenError
from sqlglot.optimizer.qualify import qualify
from sqlglot.tokens import Token, TokenType

from dbspc.compiler.catalog import Catalog, Column, TableSchema
from dbspc.compiler.dialect import Semantics, semantics_of
from dbspc.compiler.errors import DbspcError, Span, SqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_query import QueryBinder
from dbspc.compiler.frontend.ddl import table_schema
from dbspc.compiler.frontend.failing_constants import refuse_failing_constants
from dbspc.compiler.frontend.positions import SQLGLOT_FAILURES, call_name, line_col, span_of, written_name
from dbspc.compiler.frontend.shown_names import shown_names, spark_namer
from dbspc.compiler.frontend.spark_names import pretty_name
from dbspc.compiler.frontend.spark_names import unparen as _unparen
from dbspc.compiler.frontend.view_ddl import view_header
from dbspc.compiler.logical import plan as lp
from dbspc.compiler.logical.projections import renamed


@dataclass
class Program:
    """The tables and views of one SQL file, views in definition order."""

    dialect: str
    catalog: Catalog = field(default_factory=Catalog)
    tables: dict[str, TableSchema] = field(default_factory=dict)
    views: dict[str, lp.View] = field(default_factory=dict)
    # the tables and views each view's query names, to refuse replacing a view that is read
    reads: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def semantics(self) -> Semantics:
        return semantics_of(self.dialect)

    def copy(self) -> Program:
        """A program to add statements to, leaving this one as it is (the schemas and
        bound views themselves are never changed, so they are shared)."""
        catalog = Catalog(dict(self.catalog.tables))
        return Program(self.dialect, catalog, dict(self.tables), dict(self.views), dict(self.reads))


# sqlglot logs a warning and falls back to an opaque Command for statements it cannot
# parse; dbspc reports those itself, as positioned syntax errors.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def parse_statements(text: str, dialect: str) -> list[exp.Expression]:
    """sqlglot statements, with parse errors turned into positioned SqlErrors."""
    tokens = _tokens(text, dialect)
    _refuse_trailing_commas(tokens)
    written = text
    text, levels = _strip_recursion_levels(text, tokens)
    if dialect in ("spark", "databricks"):
        text = _doubled_quotes_as_escapes(text)
    try:
        reader = Dialect.get_or_raise(dialect)
        # the tokens of the text as written serve the parser unless a rewrite changed it
        parsed = reader.parser().parse(tokens if text == written else reader.tokenize(text), text)
        # a comment after the last `;` of a line is a Semicolon statement of its own
        statements = [s for s in parsed if isinstance(s, exp.Expression) and not isinstance(s, exp.Semicolon)]
    except TokenError:  # the text as rewritten for Spark's doubled quotes
        line, col = _unterminated_quote(text)
        raise SqlError("syntax error: unterminated string or quoted identifier", Span(line, col)) from None
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        _refuse_unknown_type(tokens, first.get("line"), first.get("col"))
        desc = str(first.get("description") or e).split(". Line")[0]
        if missing := _REQUIRED_KEYWORD.match(desc):  # sqlglot's words for `coalesce()` or `a AND`
            desc = _missing_part(missing.group(1))
        raise SqlError(f"syntax error: {desc}", _span(first.get("line"), first.get("col"))) from None
    except SQLGLOT_FAILURES:
        # sqlglot's builders fail this way on some calls with the wrong arguments: map(x)
        failing = _failing_call(text, tokens, dialect)
        if failing is None:
            raise SqlError("syntax error: this text cannot be read as SQL", None) from None
        raise SqlError(f"wrong number or kind of arguments to {failing[0]}()", failing[1]) from None
    _record_source_names(text, tokens, statements)
    _refuse_missing_arguments(statements)
    _attach_recursion_levels(statements, levels)
    _record_create_clauses(text, tokens, statements)
    starts = _statement_starts(tokens)
    for k, stmt in enumerate(statements):
        if isinstance(stmt, exp.Command):
            shown = " ".join(stmt.sql(dialect).split())
            shown = shown if len(shown) <= 50 else shown[:47] + "..."
            raise SqlError(f"syntax error: cannot parse '{shown}'", starts[k] if k < len(starts) else None)
    return statements


def _doubled_quotes_as_escapes(text: str) -> str:
    """Spark reads `'it''s'` as it's (and `"it""s"` as it"s); sqlglot's Spark dialect
    reads two adjacent literals and concatenates them (its). Write each doubled quote
    inside a literal as a backslash escape, which sqlglot reads as Spark does; positions
    stay, the two are of one length."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        elif ch == "`":  # a quoted identifier: skipped whole
            close = text.find(ch, i + 1)
            i = n if close < 0 else close + 1
        elif ch in "'\"":
            i += 1
            while i < n:
                if text[i] == "\\":
                    i += 2
                elif text[i] == ch and i + 1 < n and text[i + 1] == ch:
                    out[i] = "\\"
                    i += 2
                elif text[i] == ch:
                    break
                else:
                    i += 1
            i += 1
        else:
            i += 1
    return "".join(out)


def _strip_recursion_levels(text: str, tokens: list[Token]) -> tuple[str, list[tuple[str, int]]]:
    """Spark 4.1's `WITH RECURSIVE r [(cols)] MAX RECURSION LEVEL n AS (...)`, which
    sqlglot does not parse: blank the clause out (positions stay) and return the levels
    by CTE name, in source order."""
    levels: list[tuple[str, int]] = []
    words = [t.text.upper() for t in tokens]
    for i in range(len(tokens) - 3):
        if words[i : i + 3] != ["MAX", "RECURSION", "LEVEL"]:
            continue
        number = tokens[i + 3]
        if number.token_type != TokenType.NUMBER or not number.text.isdigit() or int(number.text) < 1:
            raise SqlError("MAX RECURSION LEVEL needs a positive integer", Span(number.line, number.col))
        j = i - 1
        if j >= 0 and tokens[j].token_type == TokenType.R_PAREN:  # skip the column list
            while j >= 0 and tokens[j].token_type != TokenType.L_PAREN:
                j -= 1
            j -= 1
        if j < 0:
            raise SqlError("MAX RECURSION LEVEL must follow a CTE name", Span(tokens[i].line, tokens[i].col))
        levels.append((tokens[j].text.lower(), int(number.text)))
        start, end = tokens[i].start, number.end + 1
        text = text[:start] + " " * (end - start) + text[end:]
    return text, levels


def _attach_recursion_levels(statements: list[exp.Expression], levels: list[tuple[str, int]]) -> None:
    """Each level goes to the first not yet marked CTE of its name, in source order."""
    ctes = [c for s in statements for c in s.find_all(exp.CTE)]
    ctes.sort(key=lambda c: (c.meta.get("line", 0), c.meta.get("col", 0)))
    for name, level in levels:
        for c in ctes:
            if c.alias_or_name.lower() == name and "max_recursion_level" not in c.meta:
                c.meta["max_recursion_level"] = level
                break


def _refuse_unknown_type(tokens: list[Token], line: object, col: object) -> None:
    """`CREATE TABLE t (a INTT)`: sqlglot reads `a` as a column without a type and then
    expects `)`; the user misspelt a type, so say that, at the type's position."""
    words = (TokenType.VAR, TokenType.IDENTIFIER)
    for i, t in enumerate(tokens):
        if t.line != line or t.col != col:
            continue
        if i >= 2 and t.token_type in words and tokens[i - 1].token_type in words:
            if tokens[i - 2].token_type in (TokenType.L_PAREN, TokenType.COMMA) and _in_create_table(tokens, i):
                raise SqlError(
                    f"unknown type '{t.text}' for column '{tokens[i - 1].text}'",
                    Span(t.line, max(t.col - len(t.text) + 1, 1)),
                )
        return


def _in_create_table(tokens: list[Token], i: int) -> bool:
    """Whether token i lies in a statement that starts with CREATE [...] TABLE."""
    start = i
    while start > 0 and tokens[start - 1].token_type != TokenType.SEMICOLON:
        start -= 1
    head = [t.token_type for t in tokens[start:i]]
    return bool(head) and head[0] == TokenType.CREATE and TokenType.TABLE in head


def _record_source_names(text: str, tokens: list[Token], statements: list[exp.Expression]) -> None:
    """Keep what the user wrote where sqlglot normalizes it away, for error messages:
    a function's own name (INSTR, not sqlglot's StrPosition) and the position of
    INTERVAL values and of TRUE, FALSE and NULL (sqlglot records none on them; Spark
    names `bool_and(false)` after its argument)."""
    intervals: list[exp.Expression] = []
    constants: list[exp.Expression] = []  # TRUE, FALSE and NULL: sqlglot places none
    owned: set[int] = set()  # where the names of calls with a recorded position start
    unplaced: list[exp.Expression | exp.Func] = []
    for stmt in statements:
        for node in stmt.walk(bfs=False):
            meta = node._meta
            if isinstance(node, exp.Func) and meta and "start" in meta and "end" in meta:
                meta["source_name"] = text[meta["start"] : meta["end"] + 1]
                owned.add(meta["start"])
                if isinstance(node, exp.TimestampTrunc) and (unit := _UNIT_TEXT.match(text, meta["end"] + 1)):
                    meta["unit_text"] = unit.group(1)  # date_trunc('day', ...): sqlglot upper-cases it
                if isinstance(node, exp.DateTrunc) and (last := _last_string_argument(text, tokens, meta["start"])):
                    meta["unit_text"] = last[0]  # trunc(d, 'mm'): the unit as written
                found = _last_string_argument(text, tokens, meta["start"]) if node.args.get("format") else None
                if found is not None:
                    meta["format_text"], meta["format_at"] = found  # date_format(ts, 'yyyy'): sqlglot writes '%Y'
            elif isinstance(node, exp.Mod) and meta and "start" in meta and "end" in meta:
                meta["call_name"] = text[meta["start"] : meta["end"] + 1]  # `mod(` or `%`
            elif isinstance(node, exp.Func) and not _keyword_syntax(node):
                unplaced.append(node)
            if isinstance(node, exp.Interval):
                intervals.append(node)
            elif isinstance(node, (exp.Boolean, exp.Null)) and not (meta and "start" in meta):
                if node.arg_key != "nulls_first":  # sort_array's: sqlglot's TRUE or a copy of `asc`
                    constants.append(node)
            if isinstance(node, exp.Paren) and isinstance(node.parent, exp.NullSafeEQ):
                _mark_added_paren(text, node)
    for nodes, kinds in ((intervals, (TokenType.INTERVAL,)), (constants, _CONSTANT_TOKENS)):
        keywords = [t for t in tokens if t.token_type in kinds]
        if len(keywords) == len(nodes):  # both in source order; otherwise leave them unplaced
            for node, t in zip(nodes, keywords, strict=True):
                node.meta.update(line=t.line, col=t.col, start=t.start, end=t.end)
    taken: set[int] = set()
    for node in reversed(unplaced):  # inner calls first: CAST(CAST(x AS INT) AS STRING)
        _record_call_name(text, node, owned, taken)


def _last_string_argument(text: str, tokens: list[Token], name_start: int) -> tuple[str, tuple[int, int]] | None:
    """The value of the string literal that is the last argument of the call whose name
    starts at `name_start`, as Spark reads it (a doubled quote inside it is one quote),
    and the line and column of its opening quote; None if that argument is no string
    literal."""
    at = next((i for i, t in enumerate(tokens) if t.start == name_start), None)
    if at is None or at + 1 >= len(tokens) or tokens[at + 1].token_type != TokenType.L_PAREN:
        return None
    depth, last = 0, None
    for i in range(at + 1, len(tokens)):
        kind = tokens[i].token_type
        if kind in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif kind in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
            if depth == 0:
                if last is None:
                    return None  # one argument: no pattern written
                value = _joined_string(text, tokens[last:i])
                first = tokens[last]
                return None if value is None else (value, (first.line, first.col - (first.end - first.start)))
        elif kind == TokenType.COMMA and depth == 1:
            last = i + 1
    return None


def _joined_string(text: str, parts: list[Token]) -> str | None:
    """One string literal's value from its tokens: the tokenizer splits `'a''b'` into
    two adjacent literals, which Spark reads as one with a quote inside."""
    if not parts or any(t.token_type != TokenType.STRING for t in parts):
        return None
    for prev, cur in itertools.pairwise(parts):
        if cur.start != prev.end + 1:
            return None  # 'a' 'b', apart: not one literal
    out = parts[0].text
    for t in parts[1:]:
        out += text[t.start] + t.text  # the doubled quote, ' or "
    return out


_UNIT_TEXT = re.compile(r"\s*\(\s*'([A-Za-z]+)'\s*,")

# the tokens of TRUE, FALSE and NULL; should sqlglot add such a constant of its own, the
# counts differ and none is placed
_CONSTANT_TOKENS = (TokenType.TRUE, TokenType.FALSE, TokenType.NULL)


def _mark_added_paren(text: str, node: exp.Paren) -> None:
    """sqlglot parses `a <=> b IN (c)` with parentheses of its own around `b IN (c)`;
    mark them (no `(` precedes their first token) for _spark_predicates."""
    starts = [sub._meta["start"] for sub in node.walk() if sub._meta and "start" in sub._meta]
    if starts and not text[: min(starts)].rstrip().endswith("("):
        node.meta["added"] = True


# `name(` before a call's first argument, which may open with a sign, NOT, parentheses or
# a CASE (`CAST(-3 AS SMALLINT)`, `IF(NOT b, ...)`, `CAST(CASE WHEN b THEN 1 END AS INT)`)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*(?:(?:[-+~(]|NOT\b|CASE\b|WHEN\b)\s*)*$", re.IGNORECASE)
_DISTINCT_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*DISTINCT\s+$", re.IGNORECASE)
_TYPED_LITERAL = re.compile(r"\b(DATE|TIMESTAMP_NTZ|TIMESTAMP)\s*$", re.IGNORECASE)


def _keyword_syntax(node: exp.Expression | exp.Func) -> bool:
    """sqlglot functions written without a name and `(`: AND / OR, CASE ... END and its
    WHEN branches (an If under a Case), which must not take the name of the call around
    them (CAST(CASE WHEN ... END AS INT) is a CAST)."""
    if isinstance(node, exp.If):
        return isinstance(node.parent, exp.Case)
    return isinstance(node, (exp.Connector, exp.Case))


def _record_call_name(text: str, node: exp.Expression | exp.Func, owned: set[int], taken: set[int]) -> None:
    """The name a call without a recorded position was written with (`SUBSTR(`, `CAST(`,
    `if(`): the nearest `name(` before its first argument that no inner call took. A name
    that a call with a recorded position owns is not this node's: sqlglot added the node
    (the TO_DATE around YEAR's argument)."""
    starts = [sub._meta["start"] for sub in node.walk() if sub._meta and "start" in sub._meta]
    # a typed literal (DATE '...') inside begins at its keyword
    starts += [sub._meta["typed_at"] for sub in node.walk() if sub._meta and "typed_at" in sub._meta]
    if not starts:
        return
    end = min(starts)
    if isinstance(node, exp.RegexpLike) and (infix := _infix_name(text, node)):
        node.meta["call_name"] = infix  # `s RLIKE p`: no name precedes the first argument
        return
    typed_literal = isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal)  # not CAST(DATE '...' AS ...)
    if typed_literal and (typed := _TYPED_LITERAL.search(text, max(end - 20, 0), end)):
        node.meta["call_name"] = typed.group(1)  # DATE '2024-01-31', TIMESTAMP '...'
        node.meta["typed_at"] = typed.start(1)
        return
    if isinstance(node, exp.Cast) and (suffix := _literal_suffix(text, node.this)):
        node.meta["suffix"] = suffix  # 10L, 1.5D: a literal of a type, not a call
        return
    while (m := _CALL.search(text, max(end - 200, 0), end)) is not None and m.start(1) in taken:
        end = m.start(1)
    if m is None and isinstance(node, exp.Quantile):  # percentile(DISTINCT x, ...)
        m = _DISTINCT_CALL.search(text, max(end - 200, 0), end)
    if m is None or m.start(1) in owned or m.group(1).upper() in _NOT_CALLS:
        return
    taken.add(m.start(1))
    node.meta["call_name"] = m.group(1)
    # errors about the call point at its name, not at its first argument
    line, col = line_col(text, m.end(1) - 1)
    node.meta.update(line=line, col=col, start=m.start(1), end=m.end(1) - 1)
    if isinstance(node, exp.Quantile):  # sqlglot drops percentile's third argument (the frequency)
        node.meta["arguments"] = _argument_count(text, text.index("(", m.end(1)))


def _argument_count(text: str, open_paren: int) -> int:
    """How many arguments the call whose `(` is at `open_paren` is written with: commas at
    its own depth, outside quotes, plus one (0 for `()`)."""
    depth, count, quote, i = 0, 0, "", open_paren
    some = False
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return count + 1 if some else 0
        elif ch == "," and depth == 1:
            count += 1
        if depth >= 1 and i > open_paren and not ch.isspace():
            some = True
        i += 1
    return count + 1


# keywords followed by a parenthesis that are not function names (`x IN (CAST(...`)
_NOT_CALLS = frozenset(("IN", "EXISTS", "VALUES", "USING", "OVER", "FILTER", "AS", "ON", "AND", "OR", "NOT"))


def _literal_suffix(text: str, literal: exp.Expression) -> str | None:
    """The type suffix Spark's numeric literals may carry (`L` of `10L`, `D` of `1.5D`):
    sqlglot reads them as a cast of the literal whose token spans the suffix."""
    meta = literal._meta if isinstance(literal, exp.Literal) and not literal.is_string else None
    if not meta or "start" not in meta or "end" not in meta:
        return None
    written = text[meta["start"] : meta["end"] + 1]
    digits = str(literal.this)
    if not written.startswith(digits) or len(written) == len(digits):
        return None
    suffix = written[len(digits) :]
    return suffix if suffix.isalpha() else None


def _infix_name(text: str, node: exp.Expression) -> str | None:
    """The keyword between an infix call's two arguments (`RLIKE` in `s RLIKE p`)."""
    ends = [sub._meta["end"] for sub in node.this.walk() if sub._meta and "end" in sub._meta]
    starts = [sub._meta["start"] for sub in node.expression.walk() if sub._meta and "start" in sub._meta]
    if not ends or not starts:
        return None
    gap = text[max(ends) + 1 : min(starts)].strip().split()
    return gap[-1] if len(gap) == 1 and gap[0].isalpha() else None


_CLAUSE_WORDS = ("OR", "GLOBAL", "TBLPROPERTIES", "PARTITIONED", "WITH", "IF")


def _record_create_clauses(text: str, tokens: list[Token], statements: list[exp.Expression]) -> None:
    """Where the clause keywords of each CREATE statement's head are (before its AS), for
    errors about them: sqlglot keeps no position on the properties it parses; and each
    statement's text as written, for errors that quote it."""
    groups: list[list[Token]] = [[]]
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(t)
    groups = [g for g in groups if g]
    if len(groups) != len(statements):
        return  # cannot pair them up: the errors fall back to the view's name
    for group, stmt in zip(groups, statements, strict=True):
        stmt.meta["written"] = text[group[0].start : group[-1].end + 1]
        if not isinstance(stmt, exp.Create) or group[0].token_type != TokenType.CREATE:
            continue
        clauses: dict[str, Span] = {}
        for t in group:
            if t.token_type == TokenType.ALIAS:
                break
            word = (t.text.upper().split() or [""])[0]  # '' has no words
            if word in _CLAUSE_WORDS and word not in clauses:
                clauses[word] = Span(t.line, max(t.col - len(t.text) + 1, 1))
        stmt.meta["clauses"] = clauses


_REQUIRED_KEYWORD = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*\.(\w+)'>")


def _missing_part(name: str) -> str:
    """sqlglot's "Required keyword: 'x' missing for <class Y>" in the user's words."""
    cls = getattr(exp, name, None)
    if not isinstance(cls, type):
        return f"{name.upper()} is incomplete"
    if issubclass(cls, exp.Connector):  # AND / OR
        return f"{name.upper()} is missing an operand"
    if issubclass(cls, exp.Func):
        return f"too few arguments to {name.upper()}()"
    if issubclass(cls, exp.Paren):
        return "a parenthesis holds nothing"
    if issubclass(cls, (exp.Binary, exp.Unary)):  # `a +`, `~`, `NOT`, `-`
        return "an operator is missing an operand"
    return f"{name.upper()} is incomplete"


def _failing_call(text: str, tokens: list[Token], dialect: str) -> tuple[str, Span] | None:
    """The name and position of the first call `name(...)` that sqlglot cannot read alone
    (None if each one can); only asked after the whole text failed."""
    for i, t in enumerate(tokens[:-1]):
        if tokens[i + 1].token_type != TokenType.L_PAREN or t.token_type == TokenType.L_PAREN:
            continue
        depth, end = 0, None
        for j in range(i + 1, len(tokens)):
            kind = tokens[j].token_type
            depth += kind == TokenType.L_PAREN
            depth -= kind == TokenType.R_PAREN
            if depth == 0:
                end = tokens[j].end
                break
        if end is None:
            break
        try:
            sqlglot.parse_one(f"SELECT {text[t.start : end + 1]}", read=dialect)
        except ParseError:
            continue
        except Exception:
            return t.text.upper(), Span(t.line, max(t.col - len(t.text) + 1, 1))
    return None


# Calls whose arguments sqlglot declares optional but Spark requires (WRONG_NUM_ARGS).
_SPARK_REQUIRES: dict[type[exp.Expression], tuple[str, ...]] = {
    exp.Nvl2: ("false",),
    exp.Substring: ("start",),
}


def _refuse_missing_arguments(statements: list[exp.Expression]) -> None:
    """A call written without an argument it needs (`ceil()`, `nvl2(a, b)`) is refused
    at its name; sqlglot reads it without complaint."""
    for stmt in statements:
        for sub in stmt.walk():
            node = cast(exp.Expression, sub)  # sqlglot's stubs type walk() as its base class
            if not _is_call(node):
                continue
            needed = [k for k, required in type(node).arg_types.items() if required]
            needed += _SPARK_REQUIRES.get(type(node), ())
            if any(node.args.get(k) is None for k in needed):
                # sqlglot may have added the node inside the call the user wrote: date_diff()
                while call_name(node) is None and node.parent is not None and _is_call(node.parent):
                    node = cast(exp.Expression, node.parent)
                at, up = span_of(node), cast(exp.Expression | None, node.parent)
                while at is None and up is not None:
                    at, up = span_of(up), cast(exp.Expression | None, up.parent)
                raise SqlError(f"too few arguments to {written_name(node)}()", at)


def _is_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Func)  # no narrowing: sqlglot's stubs do not make a Func an Expression


def _refuse_unprintable_calls(query: exp.Expression, dialect: str) -> None:
    """After an internal error: a call sqlglot read but cannot print again, with arguments
    of a kind it does not expect (`next_value_for(x, x)`), is the user's error, named at
    its position; without one the error stays the bug it is. Innermost calls first, so the
    one named is the one at fault."""
    for sub in reversed(list(query.walk())):
        node = cast(exp.Expression, sub)
        if _is_call(node):
            try:
                node.sql(dialect)
                node.sql()  # the binder prints calls as keys, in sqlglot's own dialect
            except SQLGLOT_FAILURES:
                raise SqlError(f"wrong number or kind of arguments to {written_name(node)}()", span_of(node)) from None


def _statement_starts(tokens: list[Token]) -> list[Span]:
    starts: list[Span] = []
    expect = True
    for t in tokens:
        if t.token_type == TokenType.SEMICOLON:
            expect = True
        elif expect:
            starts.append(Span(t.line, max(t.col - len(t.text) + 1, 1)))
            expect = False
    return starts


def _tokens(text: str, dialect: str) -> list[Token]:
    try:
        return list(Dialect.get_or_raise(dialect).tokenize(text))
    except TokenError:
        line, col = _unterminated_quote(text)
        raise SqlError("syntax error: unterminated string or quoted identifier", Span(line, col)) from None


def _unterminated_quote(text: str) -> tuple[int, int]:
    """Where the quote that never closes opens (tokenizer errors carry no position)."""
    opened: tuple[str, int] | None = None
    for i, ch in enumerate(text):
        if opened is None and ch in "'\"`":
            opened = (ch, i)
        elif opened is not None and ch == opened[0]:
            opened = None
    return line_col(text, opened[1] if opened else len(text))


def _refuse_trailing_commas(tokens: list[Token]) -> None:
    """`SELECT a, FROM t`: sqlglot drops the comma, Spark rejects it (TRAILING_COMMA_IN_SELECT)."""
    for comma, nxt in itertools.pairwise(tokens):
        if comma.token_type == TokenType.COMMA and nxt.token_type in (TokenType.FROM, TokenType.R_PAREN):
            raise SqlError(f"syntax error: trailing comma before '{nxt.text}'", Span(comma.line, comma.col))


def _span(line: object, col: object) -> Span | None:
    if isinstance(line, int) and isinstance(col, int):
        return Span(line, col)
    return None


def compile_program(text: str, dialect: str = "spark", base: Program | None = None) -> Program:
    """Bind every CREATE TABLE and CREATE VIEW of `text`, after those of `base` (left as
    it is) if given; other statements are refused."""
    program = Program(semantics_of(dialect).dialect) if base is None else base.copy()
    for stmt in parse_statements(text, dialect):
        add_statement(program, stmt)
    return program


def add_statement(program: Program, stmt: exp.Expression) -> None:
    try:
        _add_statement(program, stmt)
    except DbspcError as e:
        if e.span is None:  # an error inside a construct sqlglot placed nowhere: at least the statement
            e.span = span_of(stmt)
        raise


def _add_statement(program: Program, stmt: exp.Expression) -> None:
    if isinstance(stmt, exp.Create) and (stmt.args.get("kind") or "").upper() == "TABLE":
        table = table_schema(stmt, program.semantics)
        program.catalog.add(table, span_of(stmt.this))
        program.tables[table.name] = table
        return
    if isinstance(stmt, exp.Create) and (stmt.args.get("kind") or "").upper() == "VIEW":
        add_view(program, stmt)
        return
    written = " ".join(str(stmt.meta.get("written") or stmt.sql(program.dialect)).split())
    raise UnsupportedSql(
        f"statement '{written[:40]}' is not allowed here; "
        "a program holds CREATE TABLE and CREATE VIEW statements",
        span_of(stmt),
    )


def add_view(program: Program, stmt: exp.Create) -> None:
    header = view_header(stmt, program.dialect)
    name = header.name
    query = stmt.expression
    if query is None:
        raise SqlError(f"view '{name}' has no query", span_of(stmt))
    if name in program.catalog.tables:
        if header.if_not_exists:
            return  # Spark: IF NOT EXISTS leaves the relation that exists as it is
        _refuse_replacing(program, name, header.replace, stmt)
        if name in _relations_read(query):  # Spark: RECURSIVE_VIEW
            raise SqlError(f"view '{name}' cannot be replaced by a query that reads '{name}'", span_of(stmt.this))
    qualified = qualify_query(query, program)
    binder = QueryBinder(program.catalog, program.semantics, {n: v.plan for n, v in program.views.items()})
    try:
        rel = binder.bind(qualified, {})
    except SQLGLOT_FAILURES:
        _refuse_unprintable_calls(qualified, program.dialect)
        raise
    if program.semantics.folds_constants:
        refuse_failing_constants(name, rel, query, program.dialect, functools.partial(_bind_alone, program))
    names = [f.name for f in rel.fields]
    columns = list(header.columns)
    if columns:
        names = [c.name.lower() for c in columns]
        if len(names) != len(rel.fields):
            raise SqlError(
                f"view '{name}' names {len(names)} columns but its query returns {len(rel.fields)}", span_of(stmt)
            )
        rel = renamed(rel, names)
    if not program.semantics.sqlite_storage:
        _refuse_duplicate_columns(name, names, columns or _select_items(query), stmt)
    if name in program.views:  # OR REPLACE: the new definition comes last, after what it reads
        del program.views[name]
        del program.catalog.tables[name]
    shown = _written_names(query, names, columns, program)
    text = functools.partial(_query_text, query, program.dialect)
    program.views[name] = lp.View(name, rel, text, tuple(shown) if shown != names else ())
    program.reads[name] = _relations_read(query)
    program.catalog.add(TableSchema(name, tuple(Column(n, f.type) for n, f in zip(names, rel.fields, strict=True))))


def _bind_alone(program: Program, node: exp.Expression) -> lp.Relation:
    """`SELECT node` bound in `program` (a constant of a view, to find which one raises)."""
    query = exp.select(node)
    return QueryBinder(program.catalog, program.semantics, {}).bind(qualify_query(query, program), {})


def _refuse_replacing(program: Program, name: str, replace: bool, stmt: exp.Create) -> None:
    """A second CREATE VIEW of a name replaces the first only with OR REPLACE, and only a
    view no later view reads: those were bound to the first definition, where Spark would
    read the new one."""
    where = span_of(stmt.this)
    if not replace:
        raise SqlError(f"relation '{name}' is already defined", where)
    if name in program.tables:
        raise SqlError(f"'{name}' is a table; CREATE OR REPLACE VIEW replaces only a view", where)
    readers = sorted(v for v, reads in program.reads.items() if name in reads)
    if readers:
        raise UnsupportedSql(
            f"view '{name}' cannot be replaced: view '{readers[0]}' reads it; define '{name}' once, before it",
            where,
        )


def _written_names(
    query: exp.Expression, names: list[str], columns: list[exp.Expression], program: Program
) -> list[str]:
    """The view's column names with the case Spark keeps (shown_names.py): a CREATE VIEW
    column or a SELECT alias as written (`AS TotalAmount`), a column as the query writes
    it, `*` as its sources declare their columns."""
    if columns:
        return [c.name for c in columns]
    sources: dict[str, tuple[str, ...]] = {n: t.shown or t.names for n, t in program.catalog.tables.items()}
    sources.update({n: v.columns for n, v in program.views.items()})
    if program.semantics.spark_names:
        namer = spark_namer(*_naming_context(program))
    else:
        namer = _no_name
    return shown_names(query, names, sources, namer)


def _no_name(node: exp.Expression) -> str | None:
    return None


def _naming_context(program: Program) -> tuple[Callable[[str], bool], dict[str, frozenset[str]]]:
    """What pretty_name needs: which names may be DATE or TIMESTAMP columns, and the
    columns of each relation."""
    relations = {name: frozenset(t.names) for name, t in program.catalog.tables.items()}
    schemas = program.catalog.tables.values()
    known = {c.name for t in schemas for c in t.columns}
    datetimes = {c.name for t in schemas for c in t.columns if c.type.is_temporal}

    def datetime_column(name: str) -> bool:  # a CTE's or subquery's column may be anything
        return name in datetimes or name not in known

    return datetime_column, relations


# the parsing calls sqlglot writes back with a strftime pattern, by the name Spark knows
_PARSERS: dict[type[exp.Expression], str] = {exp.TsOrDsToDate: "TO_DATE", exp.StrToTime: "TO_TIMESTAMP"}


def _query_text(query: exp.Expression, dialect: str) -> str:
    """The view's SQL text, as the Spark oracle and pipelines run it: sqlglot's, but with
    the calls it would not write back as they were written as written (the pattern of
    date_format, to_date and to_timestamp goes through sqlglot's strftime form, which
    loses `y` from `yyyy`; unix_date becomes a DATEDIFF)."""

    def written(node: exp.Expression) -> exp.Expression:
        meta = node._meta or {}
        if isinstance(node, exp.TimeToStr) and isinstance(meta.get("format_text"), str):
            inner = node.this
            if isinstance(inner, exp.TimeStrToTime) and not (inner._meta or {}).get("call_name"):
                inner = inner.this
            return exp.Anonymous(this="DATE_FORMAT", expressions=[inner, exp.Literal.string(meta["format_text"])])
        parser = _PARSERS.get(type(node))
        if isinstance(node, exp.StrToUnix):
            parser = (call_name(node) or "unix_timestamp").upper()
        if parser is not None and isinstance(meta.get("format_text"), str):
            return exp.Anonymous(this=parser, expressions=[node.this, exp.Literal.string(meta["format_text"])])
        if isinstance(node, exp.UnixDate):
            return exp.Anonymous(this="UNIX_DATE", expressions=[node.this])
        return node

    root = query.copy()
    for node in reversed(list(root.walk(bfs=False))):  # children first: each is replaced in place
        if not isinstance(node, exp.Expression):
            continue
        new = written(node)
        if new is not node:
            if node is root:
                root = new
            else:
                node.replace(new)
    return root.sql(dialect)


def _relations_read(query: exp.Expression) -> frozenset[str]:
    ctes = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    return frozenset(t.name.lower() for t in query.find_all(exp.Table) if t.name.lower() not in ctes)


def _select_items(query: exp.Expression) -> list[exp.Expression]:
    """The output expressions of a query, for positions (the first SELECT of a set operation)."""
    while isinstance(query, exp.SetOperation):
        query = query.this
    return list(query.expressions) if isinstance(query, exp.Select) else []


def _refuse_duplicate_columns(view: str, names: list[str], nodes: list[exp.Expression], stmt: exp.Create) -> None:
    """Spark refuses a view with two columns of one name (COLUMN_ALREADY_EXISTS); reading
    either would be ambiguous."""
    seen: set[str] = set()
    for i, n in enumerate(names):
        if n.lower() in seen:  # Spark compares column names case-insensitively
            where = nodes[i] if i < len(nodes) else stmt
            raise SqlError(
                f"view '{view}' has two columns named '{n}'; give one an alias (Spark: COLUMN_ALREADY_EXISTS)",
                span_of(where),
            )
        seen.add(n.lower())


_POSITION = re.compile(r"Line: (\d+), Col: (\d+)")


def qualify_query(query: exp.Expression, program: Program) -> exp.Expression:
    """Resolve and qualify every name with sqlglot's optimizer."""
    _refuse_unknown_tables(query, program)
    pivot = query.find(exp.Pivot)
    if pivot is not None:  # refused here: qualification would otherwise fail on its columns
        if pivot.args.get("unpivot"):
            how = "write it as a UNION ALL of one SELECT per unpivoted column"
        else:
            how = "write it as one aggregate per value, e.g. SUM(CASE WHEN g = 'a' THEN x END) AS a"
        what = "UNPIVOT" if pivot.args.get("unpivot") else "PIVOT"
        raise UnsupportedSql(f"{what} is not supported in an incremental view; {how}", span_of(pivot))
    try:
        schema = dict(program.catalog.sqlglot_schema())
        qualified = qualify(
            _mark_join_stars(
                _join_columns_in_having(
                    _alias_select_subqueries(
                        flatten_parenthesized_joins(
                            _spark_names(
                                _spark_predicates(_sqlite_rewrites(_resolve_positions(query.copy()), program), program),
                                program,
                            )
                        )
                    )
                )
            ),
            schema=schema,  # type: ignore[arg-type]
            dialect=program.dialect,
            validate_qualify_columns=True,
        )
        return _semi_anti_joins_to_exists(_join_stars_in_spark_order(_join_columns_resolved(qualified), schema))
    except OverflowError:  # sqlglot reads ORDER BY 99999999999999999999 as a position
        past = "an ORDER BY or GROUP BY position past the end of the select list"
        raise UnsupportedSql(past, span_of(query)) from None
    except AssertionError:  # sqlglot's own checks: a position naming a `t.*` it could not expand
        raise SqlError("cannot resolve the query's columns", span_of(query)) from None
    except (OptimizeError, SchemaError) as e:
        message = str(e)
        m = _POSITION.search(message)
        text = _POSITION.sub("", message).strip().rstrip(".")
        span = span_of(query)
        if m:
            # sqlglot reports the column of the name's last character
            name = re.match(r"Column '(.+?)' could not be resolved", text)
            width = len(name.group(1).split(".")[-1]) if name else 1
            span = Span(int(m.group(1)), max(int(m.group(2)) - width + 1, 1))
        raise SqlError(_ambiguous(text, query, program) or _friendly(text), span) from None


def _ambiguous(message: str, query: exp.Expression, program: Program) -> str | None:
    """sqlglot reports an unqualified column that two FROM items hold as unresolvable;
    say it is ambiguous and name the candidates as the user can qualify them."""
    m = re.match(r"Column '([^.']+)' could not be resolved", message)
    if not m:
        return None
    name = m.group(1).lower()
    for select in query.find_all(exp.Select):
        if not any(c.name.lower() == name and not c.table for c in select.find_all(exp.Column)):
            continue
        from_ = select.args.get("from_")
        items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
        candidates = []
        for item in items:
            if isinstance(item, exp.Table):
                table = program.catalog.tables.get(item.name.lower())
                held = table.names if table is not None else ()
            elif isinstance(item, exp.Subquery) and isinstance(item.this, exp.Query):
                held = tuple(n.lower() for n in item.this.named_selects)
            else:
                continue
            if name in held:
                candidates.append(f"{item.alias_or_name}.{m.group(1)}")
        if len(candidates) > 1:
            return f"column '{m.group(1)}' is ambiguous: it could be {' or '.join(candidates)}"
    return None


def _friendly(message: str) -> str:
    m = re.match(r"Column '(.+)' could not be resolved", message) or re.match(r"Unknown column: (.+)", message)
    if m:
        return f"column '{m.group(1)}' cannot be resolved"
    return message[0].lower() + message[1:] if message else "cannot resolve names"


def _semi_anti_joins_to_exists(query: exp.Expression) -> exp.Expression:
    """`a LEFT SEMI JOIN b ON c` is `a WHERE EXISTS (SELECT 1 FROM b WHERE c)`, and
    LEFT ANTI JOIN the NOT EXISTS: b's columns are not visible after the join, and the
    condition reads only a and b, so it filters a's rows wherever it is applied, unless a
    later RIGHT or FULL join pads rows that the filter must not see."""
    for sel in list(query.find_all(exp.Select)):
        joins = list(sel.args.get("joins") or [])
        conditions: list[exp.Expression] = []
        seen_semi = False
        for join in joins:
            kind = (join.args.get("kind") or "").upper()
            side = (join.args.get("side") or "").upper()
            if kind not in ("SEMI", "ANTI"):
                if seen_semi and side in ("RIGHT", "FULL"):
                    raise UnsupportedSql(f"{side} JOIN after a SEMI or ANTI join is not supported", span_of(join))
                continue
            seen_semi = True
            sub = exp.select("1").from_(join.this.copy())
            if join.args.get("on") is not None:
                sub = sub.where(join.args["on"].copy())
            exists: exp.Expression = exp.Exists(this=sub)
            conditions.append(exp.Not(this=exists) if kind == "ANTI" else exists)
            join.pop()
        if conditions:
            where = sel.args.get("where")
            parts = ([where.this] if where is not None else []) + conditions
            sel.set("where", exp.Where(this=exp.and_(*parts)))
    return query


def _sqlite_rewrites(query: exp.Expression, program: Program) -> exp.Expression:
    """SQLite's TOTAL(x) is SUM(x) as a REAL, and 0.0 (not NULL) over no values.

    COALESCE(c, ...) whose first non-NULL argument is a constant is that constant: SQLite's
    values carry their own type, so COALESCE(43, AVG(x)) is the INTEGER 43 (43 / -60 is 0),
    where a static common type would make it the REAL 43.0 (43.0 / -60 is -0.72)."""
    if not program.semantics.sqlite_storage:
        return query
    for coalesce in list(query.find_all(exp.Coalesce)):
        args = [coalesce.this, *coalesce.expressions]
        while args and isinstance(_unparen(args[0]), exp.Null):
            args.pop(0)
        if not args or not _constant_not_null(args[0]):
            continue
        first = args[0].copy()
        parent = coalesce.parent
        if isinstance(parent, exp.Select) and coalesce in parent.expressions:
            first = exp.Alias(this=first, alias=exp.to_identifier(coalesce.sql(program.dialect)))
        coalesce.replace(first)
    for call in list(query.find_all(exp.Anonymous)):
        if call.name.lower() != "total" or len(call.expressions) != 1:
            continue
        as_real = exp.Add(this=exp.Sum(this=call.expressions[0].copy()), expression=exp.Literal.number("0.0"))
        call.replace(exp.Coalesce(this=exp.Paren(this=as_real), expressions=[exp.Literal.number("0.0")]))
    return query


_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ)
_PREDICATES = (exp.In, exp.Between, exp.Like, exp.ILike, exp.RegexpLike)
_PREDICATE_WORDS = {exp.In: "IN", exp.Between: "BETWEEN", exp.Like: "LIKE", exp.ILike: "ILIKE", exp.RegexpLike: "RLIKE"}


def _spark_predicates(query: exp.Expression, program: Program) -> exp.Expression:
    """Spark's precedence for IN, BETWEEN and LIKE after a comparison (see
    Semantics.spark_predicates): `a = b IN (c)`, parsed by sqlglot as a = (b IN (c)),
    becomes (a = b) IN (c); a predicate applied to an unparenthesized predicate is
    refused as Spark's parser refuses it. Mutates `query` (a copy)."""
    if not program.semantics.spark_predicates:
        return query
    for node in list(query.find_all(*_PREDICATES)):
        assert isinstance(node, exp.Expression)
        if isinstance(node.this, (*_PREDICATES, exp.Is)):
            first = _PREDICATE_WORDS.get(type(node.this), "IS")
            raise SqlError(
                f"{_PREDICATE_WORDS[type(node)]} after {first} without parentheses is a syntax error in Spark SQL "
                f"(PARSE_SYNTAX_ERROR); write (... {first} ...) {_PREDICATE_WORDS[type(node)]} ...",
                span_of(node),
            )
    for cmp in list(query.find_all(*_COMPARISONS)):
        pred = cmp.expression
        if isinstance(pred, exp.Paren) and (pred._meta or {}).get("added"):
            pred = pred.this  # parentheses sqlglot added after <=>, not the user's
        if isinstance(pred, _PREDICATES):  # a parenthesized one is an exp.Paren
            cmp.replace(pred)
            cmp.set("expression", pred.this)
            pred.set("this", cmp)
    return query


def _spark_names(query: exp.Expression, program: Program) -> exp.Expression:
    """Alias every unaliased SELECT item that Spark names by its SQL (`sum(x)`, `(a + b)`)
    with that name, in every SELECT of the query (a subquery's names reach the outer
    `*`); the others keep sqlglot's names (a column's own name, or `_col_<i>`)."""
    if not program.semantics.spark_names:
        return query
    datetime_column, relations = _naming_context(program)
    for sel in list(query.find_all(exp.Select)):
        columns = {c.name.lower() for c in sel.find_all(exp.Column)}
        for i, item in enumerate(list(sel.expressions)):
            core = _unparen(item)
            if isinstance(item, exp.Alias) or isinstance(core, (exp.Column, exp.Star)):
                continue
            if isinstance(core, (exp.Cast, exp.TryCast)) and isinstance(_unparen(core.this), exp.Column):
                continue  # sqlglot names it after the column, as Spark does
            name = pretty_name(item, datetime_column, relations)
            # a name that is also a column's would change what GROUP BY or ORDER BY resolve to
            if name is None or name.lower() in columns:
                if item.output_name:  # sqlglot would name `1D` or `CAST(NULL AS INT)` by a part of it
                    item.replace(exp.Alias(this=item.copy(), alias=exp.to_identifier(f"_col_{i}")))
                continue
            alias = exp.Alias(this=item.copy(), alias=exp.to_identifier(name, quoted=True))
            alias.meta["spark_name"] = name  # qualify lower-cases identifiers; Spark's name keeps `CASE WHEN`
            item.replace(alias)
    return query


def _constant_not_null(node: exp.Expression) -> bool:
    """A literal, possibly negated or parenthesized: never NULL, the same on every row."""
    node = _unparen(node)
    if isinstance(node, exp.Neg):
        return _constant_not_null(node.this)
    return isinstance(node, exp.Literal)


def flatten_parenthesized_joins(query: exp.Expression) -> exp.Expression:
    """`FROM (a CROSS JOIN b), c` is `FROM a CROSS JOIN b, c` when every join of the SELECT is
    inner: inner joins are associative and their ON conditions are filters of the whole
    product. sqlglot parses the parenthesized join as an unaliased Subquery over a Table
    that holds the joins; with an outer join the grouping matters, so it stays (refused)."""
    for sel in list(query.find_all(exp.Select)):
        while _flatten_one(sel):
            pass
    return query


def _flatten_one(sel: exp.Select) -> bool:
    from_ = sel.args.get("from_")
    joins = list(sel.args.get("joins") or [])
    if from_ is None:
        return False
    holders: list[exp.Expression] = [from_, *joins]
    for pos, holder in enumerate(holders):
        inner = holder.this
        if not (isinstance(inner, exp.Subquery) and isinstance(inner.this, (exp.Table, exp.Subquery))):
            continue
        if inner.alias:
            continue
        table = inner.this
        nested = list(table.args.get("joins") or [])
        if not nested or not all(_is_inner(j) for j in joins + nested):
            continue
        table.set("joins", None)
        on = holder.args.get("on") if isinstance(holder, exp.Join) else None
        if on is not None:
            holder.set("on", None)
            last = nested[-1]
            both = on if last.args.get("on") is None else exp.and_(last.args["on"], on)
            last.set("on", both)
            last.set("kind", None)  # an ON needs an inner JOIN, not a CROSS JOIN
        holder.set("this", table)
        index = pos  # the nested joins follow their first table
        sel.set("joins", joins[:index] + nested + joins[index:])
        return True
    return False


def _is_inner(join: exp.Join) -> bool:
    kind = (join.args.get("kind") or "").upper()
    side = (join.args.get("side") or "").upper()
    return not side and kind in ("", "INNER", "CROSS") and join.args.get("using") is None


_USING_ITEM = "__dbspc_join_column_"


def _named_join(joins: list[exp.Join]) -> bool:
    """Whether one of the joins is JOIN ... USING or a NATURAL JOIN."""
    return any(j.args.get("using") or j.args.get("method") for j in joins)


def _is_star(item: exp.Expr) -> bool:
    """`*` or `t.*` in a SELECT list."""
    return isinstance(item, exp.Star) or (isinstance(item, exp.Column) and item.is_star)


def _join_columns_in_having(query: exp.Expression) -> exp.Expression:
    """sqlglot's qualify gives a JOIN ... USING or NATURAL JOIN column its meaning (the
    COALESCE of the joined columns) in every clause but HAVING and QUALIFY, where it
    leaves the bare name. Such a name is first put in the SELECT list as a hidden item,
    which qualify expands; _join_columns_resolved then moves the expansion back."""
    for sel in list(query.find_all(exp.Select)):
        joins = sel.args.get("joins") or []
        if not _named_join(joins):
            continue
        names = set(sel.named_selects)
        for clause in (sel.args.get("having"), sel.args.get("qualify")):
            for col in list(clause.find_all(exp.Column)) if clause is not None else []:
                if col.table or col.name in names or col.find_ancestor(exp.Select) is not sel:
                    continue
                sel.append("expressions", exp.alias_(col.copy(), f"{_USING_ITEM}{len(sel.expressions)}"))
                col.replace(exp.column(f"{_USING_ITEM}{len(sel.expressions) - 1}"))
    return query


def _join_columns_resolved(query: exp.Expression) -> exp.Expression:
    """The hidden items of _join_columns_in_having, put back where they were read."""
    for sel in list(query.find_all(exp.Select)):
        hidden = {e.alias: e.this for e in sel.expressions if e.alias.startswith(_USING_ITEM)}
        if not hidden:
            continue
        for col in list(sel.find_all(exp.Column)):
            if col.name in hidden and col.find_ancestor(exp.Select) is sel:
                col.replace(hidden[col.name].copy())
        sel.set("expressions", [e for e in sel.expressions if not e.alias.startswith(_USING_ITEM)])
    return query


def _mark_join_stars(query: exp.Expression) -> exp.Expression:
    """Remember where `t.*` stands in a SELECT over a JOIN ... USING or NATURAL JOIN, for
    _join_stars_in_spark_order. More than one such join under a `t.*` is refused."""
    for sel in list(query.find_all(exp.Select)):
        joins = sel.args.get("joins") or []
        if not _named_join(joins):
            continue
        stars = [
            (i, e.table.lower())
            for i, e in enumerate(sel.expressions)
            if isinstance(e, exp.Column) and isinstance(e.this, exp.Star) and e.table
        ]
        if not stars:
            continue
        if len(joins) > 1:
            star = sel.expressions[stars[0][0]]
            raise UnsupportedSql(
                f"'{star.sql()}' over more than one JOIN where one is USING or NATURAL is not supported; "
                "list the columns",
                span_of(star),
            )
        sel.meta["join_stars"] = (len(sel.expressions), stars)
    return query


def _join_stars_in_spark_order(query: exp.Expression, schema: dict[str, Any]) -> exp.Expression:
    """`t.*` over a JOIN ... USING or NATURAL JOIN lists t's join columns first, in the
    join's order, then t's other columns (Spark expands it over the join's hidden key
    columns; sqlglot gives t's own order). The values stay t's own."""
    for sel in list(query.find_all(exp.Select)):
        marked = (sel._meta or {}).get("join_stars")
        if marked is None:
            continue
        count, stars = marked
        joins = sel.args.get("joins") or []
        on = joins[0].args.get("on") if joins else None
        keys = [eq.this.name for eq in (on.flatten() if isinstance(on, exp.And) else [on]) if isinstance(eq, exp.EQ)]
        items = list(sel.expressions)
        extra = len(items) - (count - len(stars))  # columns the stars expanded to
        widths = [_source_width(sel, query, table, schema) for _, table in stars]
        if len(stars) == 1:
            widths = [extra]
        if any(w is None for w in widths) or sum(w or 0 for w in widths) != extra:
            continue  # cannot tell where each expansion lies: keep sqlglot's order
        width_at = {i: w or 0 for (i, _), w in zip(stars, widths, strict=True)}
        out: list[exp.Expression] = []
        pos = 0
        for i in range(count):
            if i not in width_at:
                out.append(items[pos])
                pos += 1
                continue
            run = items[pos : pos + width_at[i]]
            pos += width_at[i]
            names = [e.alias_or_name for e in run]
            first = [run[names.index(k)] for k in keys if k in names]
            out.extend(first + [e for e in run if e not in first])
        sel.set("expressions", out)
    return query


def _source_width(sel: exp.Select, query: exp.Expression, alias: str, schema: dict[str, Any]) -> int | None:
    """How many columns FROM item `alias` of `sel` has, or None if unknown."""
    from_ = sel.args.get("from_")
    items = ([from_.this] if from_ is not None else []) + [j.this for j in sel.args.get("joins") or []]
    for item in items:
        if item.alias_or_name.lower() != alias:
            continue
        if isinstance(item, exp.Subquery) and isinstance(item.this, exp.Query):
            return len(item.this.named_selects)
        if isinstance(item, exp.Table):
            for cte in query.find_all(exp.CTE):
                if cte.alias_or_name.lower() == item.name.lower() and isinstance(cte.this, exp.Query):
                    return len(cte.this.named_selects)
            held = schema.get(item.name) or schema.get(item.name.lower())
            return len(held) if isinstance(held, dict) else None
    return None


def _alias_select_subqueries(query: exp.Expression) -> exp.Expression:
    """Name the bare scalar subqueries of every SELECT list with an explicit Alias:
    sqlglot's qualify names them by the Subquery's own alias, and then fails on an
    ORDER BY ordinal that points at one (it expects an Alias there)."""
    for sel in list(query.find_all(exp.Select)):
        for i, e in enumerate(sel.expressions):
            if isinstance(e, exp.Subquery) and not e.alias:
                e.replace(exp.Alias(this=e.copy(), alias=exp.to_identifier(f"_col_{i}")))
    return query


def _position_literal(node: exp.Expression) -> int | None:
    """The integer a GROUP BY / ORDER BY item is, if it is a literal one (Spark reads
    `-1` and `(2)` as positions too), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    sign = 1
    if isinstance(node, exp.Neg):
        node, sign = node.this, -1
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return sign * int(node.name)
    return None


def _resolve_positions(query: exp.Expression) -> exp.Expression:
    """GROUP BY 3 and ORDER BY 3 name the third SELECT item, in Spark also inside ROLLUP,
    CUBE and GROUPING SETS, where sqlglot's qualify leaves them as constants: those are
    replaced by the item here. A position outside the list is an error in Spark
    (GROUP_BY_POS_OUT_OF_RANGE, ORDER_BY_POS_OUT_OF_RANGE), not a constant to group or
    sort by. Mutates `query` (a copy)."""
    for q in list(query.find_all(exp.Query)):
        if any(_is_star(e) for e in q.selects):
            continue  # `*` is expanded by qualify, which then reads the positions itself
        width = len(q.selects)
        clauses = [("GROUP BY", "GROUP_BY", q.args.get("group")), ("ORDER BY", "ORDER_BY", q.args.get("order"))]
        for clause, code, node in clauses:
            if node is None or (clause == "GROUP BY" and not isinstance(q, exp.Select)):
                continue
            for item, nested in _position_items(node.expressions):
                n = _position_literal(item)
                if n is None:
                    continue
                if not 1 <= n <= width:
                    raise SqlError(
                        f"{clause} position {n} is not in select list (valid range is [1, {width}]) "
                        f"(Spark: {code}_POS_OUT_OF_RANGE)",
                        span_of(item),
                    )
                if nested:
                    chosen = q.selects[n - 1]
                    item.replace((chosen.this if isinstance(chosen, exp.Alias) else chosen).copy())
    return query


def _position_items(items: list[exp.Expression]) -> list[tuple[exp.Expression, bool]]:
    """The items of a GROUP BY or ORDER BY, each with whether it sits inside ROLLUP, CUBE
    or GROUPING SETS (where sqlglot does not read positions)."""
    out: list[tuple[exp.Expression, bool]] = []
    for item in items:
        if isinstance(item, exp.Ordered):
            out.append((item.this, False))
        elif isinstance(item, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            for e in item.expressions:
                out += [(x, True) for x in (e.expressions if isinstance(e, exp.Tuple) else [e])]
        else:
            out.append((item, False))
    return out


def _refuse_unknown_tables(query: exp.Expression, program: Program) -> None:
    cte_names = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    for table in query.find_all(exp.Table):
        name = table.name.lower()
        if name and name not in program.catalog.tables and name not in cte_names:
            raise SqlError(f"table or view '{table.name}' does not exist", span_of(table))

"""Spark's string functions beyond the basic ones of the scalar binder, typed as Spark does.

Rules receive the sqlglot node and `bind` (binds a subexpression in the caller's scope).
- lpad/rpad(s, len[, pad]): pad with `pad` repeated (a space by default) to `len`
  characters, or cut to `len`; '' for len <= 0; `s` itself for an empty pad. `len` and
  `pad` must be constants.
- instr(s, sub), locate(sub, s[, pos]): 1-based position, 0 when absent, 1 for ''.
- concat_ws(sep, ...): joins the non-NULL arguments; NULL for a NULL separator; `sep`
  must be a constant.
- regexp_extract(s, pattern[, group]): the group's text, '' when nothing matches.
- s RLIKE pattern (REGEXP, regexp_like): whether the pattern matches part of s.
  The patterns are constants, Java's syntax (Spark's), rewritten for the runtime's engine
  with the same meaning (java_regex.py); what cannot be rewritten exactly is refused.
- initcap (words split on spaces), reverse, repeat.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.java_regex import Rewritten, java_to_rust
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.type_rules import coerce
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import BOOLEAN, INT, STRING

Bind = Callable[[exp.Expression], Scalar]
Rule = Callable[[exp.Expression, Bind], Scalar]


def _text(x: Scalar) -> Scalar:
    return coerce(x, STRING)


def _constant(x: Scalar, node: exp.Expression, what: str, kind: type) -> object:
    if not isinstance(x, Lit) or not (x.value is None or isinstance(x.value, kind)):
        raise UnsupportedSql(f"{what} must be a constant", span_of(node))
    return x.value


def _pad(node: exp.Expression, bind: Bind) -> Scalar:
    name = "LPAD" if node.args.get("is_left") else "RPAD"
    s = _text(bind(node.this))
    width = _constant(coerce(bind(node.expression), INT), node, f"the length of {name}", int)
    fill = node.args.get("fill_pattern")
    pad = _constant(_text(bind(fill)), node, f"the pad of {name}", str) if fill is not None else " "
    if width is None or pad is None:
        return Lit(STRING, None)
    assert isinstance(width, int) and isinstance(pad, str)
    fn = "lpad" if node.args.get("is_left") else "rpad"
    # the padding for the widest need: pad repeated and cut to `width` characters
    padding = (pad * (width // len(pad) + 1))[: max(width, 0)] if pad else ""
    return Call(STRING, fn, (s, Lit(INT, width), Lit(STRING, padding)))


def _position(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    sub = _text(bind(node.args["substr"]))
    pos = node.args.get("position")
    start = coerce(bind(pos), INT) if pos is not None else Lit(INT, 1)
    return Call(INT, "locate", (sub, s, start))


def _concat_ws(node: exp.Expression, bind: Bind) -> Scalar:
    sep_node, *items = node.expressions
    sep = _constant(_text(bind(sep_node)), node, "the separator of CONCAT_WS", str)
    if sep is None:
        return Lit(STRING, None)
    args = tuple(_text(bind(i)) for i in items)
    if not args:
        return Lit(STRING, "")
    return Call(STRING, "concat_ws", (Lit(STRING, sep), *args))


def _regexp_extract(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    pattern = _constant(_text(bind(node.expression)), node, "the pattern of REGEXP_EXTRACT", str)
    group_node = node.args.get("group")
    group = _constant(coerce(bind(group_node), INT), node, "the group of REGEXP_EXTRACT", int) if group_node else 1
    if pattern is None or group is None:
        return Lit(STRING, None)
    assert isinstance(pattern, str) and isinstance(group, int)
    rewritten = _runtime_pattern(pattern, node.expression)
    if rewritten.end_anchor:  # Java's `$` may end before a final line terminator: which match is first is open
        raise UnsupportedSql(
            f"regular expression '{pattern}': '$' is not supported in REGEXP_EXTRACT", span_of(node.expression)
        )
    rust, groups = rewritten.pattern, rewritten.groups
    if not 0 <= group <= groups:
        raise SqlError(f"REGEXP_EXTRACT group {group} is not in '{pattern}' ({groups} groups)", span_of(node))
    return Call(STRING, "regexp_extract", (s, Lit(STRING, rust), Lit(INT, group)))


def _rlike(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    pattern = _constant(_text(bind(node.expression)), node, "the pattern of RLIKE", str)
    if pattern is None:
        return Lit(BOOLEAN, None)
    assert isinstance(pattern, str)
    rewritten = _runtime_pattern(pattern, node.expression)
    return Call(BOOLEAN, "rlike", (s, Lit(STRING, rewritten.pattern), Lit(BOOLEAN, rewritten.end_anchor)))


def _runtime_pattern(pattern: str, where: exp.Expression) -> Rewritten:
    """`pattern` (Java's syntax) for the runtime's engine and its number of groups, or a
    positioned error: refused where no exact rewrite exists, invalid where the engine
    cannot compile the rewrite (a malformed pattern)."""
    try:
        rewritten = java_to_rust(pattern)
    except ValueError as e:
        raise UnsupportedSql(f"regular expression '{pattern}': {e}", span_of(where)) from None
    try:
        _runtime_regex_accepts(rewritten.pattern)
    except ValueError as e:
        raise SqlError(f"invalid regular expression '{pattern}': {e}", span_of(where)) from None
    return rewritten


def _runtime_regex_accepts(pattern: str) -> None:
    """The runtime's regex engine (polars, Rust's regex) lacks look-around and
    back-references; refuse such a pattern now rather than fail at the first step."""
    import polars as pl

    try:
        pl.Series([""], dtype=pl.String).str.extract(pattern, 0)
    except pl.exceptions.PolarsError as e:
        reason = next((line for line in str(e).splitlines() if line.startswith("error: ")), "error: not supported")
        raise ValueError(reason.removeprefix("error: ")) from None


def _unary(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        return Call(STRING, fn, (_text(bind(node.this)),))

    return rule


def _repeat(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(STRING, "repeat", (_text(bind(node.this)), coerce(bind(node.args["times"]), INT)))


RULES: dict[type[exp.Expression], Rule] = {
    exp.Pad: _pad,
    exp.StrPosition: _position,
    exp.ConcatWs: _concat_ws,
    exp.RegexpExtract: _regexp_extract,
    exp.RegexpLike: _rlike,
    exp.Initcap: _unary("initcap"),
    exp.Reverse: _unary("reverse"),
    exp.Repeat: _repeat,
}

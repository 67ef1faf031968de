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
- regexp_replace(s, pattern, replacement[, position]): every match from the position-th
  character on replaced; Java's replacement syntax (`$n` takes the most digits that name a
  group, `\\x` is x) rewritten for the runtime's engine. Constant pattern, replacement and
  position. Refused: a pattern that can match the empty string (Java and Rust place empty
  matches differently, and Java's split characters outside the BMP), `$`, and a
  replacement Java rejects on its first match (`$` without a group, a missing group, a
  trailing backslash) or that names a group (`${name}`).
- split_part(s, delim, part): the part-th piece of s split at the constant delim
  (1-based, from the end when part < 0), '' beyond the pieces, s itself (as its only
  piece) for an empty delim; part 0 is Spark's INVALID_INDEX_OF_ZERO for a non-NULL s.
- elt(n, s1, s2, ...): the n-th string (only it is evaluated); NULL for a NULL n; an n
  outside 1..k is Spark's ANSI INVALID_ARRAY_INDEX.
- substring_index(s, delim, count): the text before the count-th delim (after the
  count-th from the end when count < 0); '' for count 0 or an empty delim. A constant
  delim that cannot overlap itself (Spark finds overlapping occurrences).
- translate(s, from, to): each character of the constant `from` becomes the character
  of `to` at its position, or is deleted when `to` is shorter; the first of repeated
  characters counts.
- startswith, endswith, contains (BOOLEAN), ascii (the first character's code point, 0
  for ''), chr/char (the character of n mod 256, '' for n < 0), btrim (spaces, or the
  given characters, from both ends), octet_length, bit_length (UTF-8 bytes), space(n).
- split(s, pattern[, limit]): ARRAY<STRING> of the pieces between the matches (Java's
  String.split, trailing empty pieces kept); at most `limit` pieces when limit > 0, the
  last holding the rest. The empty pattern splits into characters. Constant pattern and
  limit; refused: a pattern that can match the empty string, `^`, `\\A` and `$`.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dbspc.compiler.errors import SqlError, UnsupportedSql
from dbspc.compiler.frontend.java_regex import Rewritten, java_to_rust
from dbspc.compiler.frontend.positions import span_of
from dbspc.compiler.frontend.type_rules import coerce
from dbspc.compiler.logical.scalar import Call, Lit, Scalar
from dbspc.compiler.types import BIGINT, BOOLEAN, INT, STRING, array_of

Bind = Callable[[exp.Expression], Scalar]
Rule = Callable[[exp.Expression, Bind], Scalar]


def _text(x: Scalar) -> Scalar:
    return coerce(x, STRING)


def _constant(x: Scalar, node: exp.Expression, what: str, kind: type) -> object:
    if not isinstance(x, Lit) or not (x.value is None or isinstance(x.value, kind)):
        raise UnsupportedSql(f"{what} must be a constant", span_of(node))
    return x.value


def _constant_text(node: exp.Expression, bind: Bind, what: str) -> object:
    """A constant STRING argument (None for NULL); an integer constant reads as its digits,
    as Spark casts it."""
    x = bind(node)
    if isinstance(x, Lit) and x.type.is_integer and isinstance(x.value, int) and not isinstance(x.value, bool):
        return str(x.value)
    return _constant(_text(x), node, what, str)


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
    return Call(STRING, fn, (s, Lit(INT, width), Lit(STRING, pad)))


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


def _refuse_empty_matches(pattern: str, rewritten: Rewritten, function: str, where: exp.Expression) -> None:
    if _matches_empty(rewritten.pattern):
        raise UnsupportedSql(
            f"regular expression '{pattern}' can match an empty string, which {function} does not support "
            "(Java and the runtime's engine place empty matches differently)",
            span_of(where),
        )


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


def _regexp_replace(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    replacement_node = node.args.get("replacement")
    if replacement_node is None:
        raise SqlError("REGEXP_REPLACE takes three or four arguments", span_of(node))
    pattern = _constant_text(node.expression, bind, "the pattern of REGEXP_REPLACE")
    replacement = _constant_text(replacement_node, bind, "the replacement of REGEXP_REPLACE")
    position_node = node.args.get("position")
    position: object = 1
    if position_node is not None:
        bound = bind(position_node)
        if not bound.type.is_integer and bound.type.kind != "NULL":
            raise SqlError(f"the position of REGEXP_REPLACE must be an INT, not {bound.type}", span_of(position_node))
        position = _constant(coerce(bound, INT), position_node, "the position of REGEXP_REPLACE", int)
        if isinstance(position, int) and position <= 0:
            raise SqlError(f"the position of REGEXP_REPLACE must be at least 1, not {position}", span_of(position_node))
    if pattern is None or replacement is None or position is None:
        return Lit(STRING, None)
    assert isinstance(pattern, str) and isinstance(replacement, str) and isinstance(position, int)
    rewritten = _runtime_pattern(pattern, node.expression)
    if rewritten.end_anchor:  # Java's `$` may also end before a final line terminator
        raise UnsupportedSql(
            f"regular expression '{pattern}': '$' is not supported in REGEXP_REPLACE", span_of(node.expression)
        )
    _refuse_empty_matches(pattern, rewritten, "REGEXP_REPLACE", node.expression)
    try:
        rust_replacement = java_replacement(replacement, rewritten.groups)
    except ValueError as e:
        where = span_of(replacement_node)
        raise UnsupportedSql(f"the replacement '{replacement}' of REGEXP_REPLACE: {e}", where) from None
    args = (s, Lit(STRING, rewritten.pattern), Lit(STRING, rust_replacement), Lit(INT, position))
    return Call(STRING, "regexp_replace", args)


def java_replacement(text: str, groups: int) -> str:
    """Java's replacement text (Matcher.appendReplacement) for Rust's regex: `$n` names
    group n, taking further digits while they still name a group; `\\c` is c; anything
    else is itself. ValueError where Java raises, and for `${name}`."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        i += 1
        if c == "\\":
            if i == len(text):
                raise ValueError("a trailing '\\' escapes nothing (Java raises)")
            out.append("$$" if text[i] == "$" else text[i])
            i += 1
        elif c == "$":
            if i == len(text) or text[i] not in "0123456789{":
                raise ValueError("'$' must be followed by a group number (Java raises); write '\\$' for a '$'")
            if text[i] == "{":
                raise ValueError("named group references ('${name}') are not supported")
            ref = int(text[i])
            i += 1
            while i < len(text) and text[i] in "0123456789" and ref * 10 + int(text[i]) <= groups:
                ref = ref * 10 + int(text[i])
                i += 1
            if ref > groups:
                raise ValueError(f"group {ref} is not in the pattern (Java raises)")
            out.append("${" + str(ref) + "}")
        else:
            out.append("$$" if c == "$" else c)
    return "".join(out)


def _matches_empty(rust_pattern: str) -> bool:
    """Whether the pattern can match an empty string somewhere: the only zero-width
    assertions java_regex lets through (`^`, `\\A`, `\\z`) all hold in ''."""
    import polars as pl

    return bool(pl.Series([""], dtype=pl.String).str.contains(rust_pattern).item())


def _substring_index(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    delim_node = node.args["delimiter"]
    delim = _constant_text(delim_node, bind, "the delimiter of SUBSTRING_INDEX")
    count = coerce(bind(node.args["count"]), INT)
    if delim is None:
        return Lit(STRING, None)
    assert isinstance(delim, str)
    if any(delim[:k] == delim[-k:] for k in range(1, len(delim))):
        raise UnsupportedSql(
            f"the delimiter '{delim}' of SUBSTRING_INDEX can overlap itself, which is not supported",
            span_of(delim_node),
        )
    return Call(STRING, "substring_index", (s, Lit(STRING, delim), count))


INDEX_OF_ZERO = (
    "[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element "
    "has index 1)."
)


def _split_part(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    delim = _constant_text(node.args["delimiter"], bind, "the delimiter of SPLIT_PART")
    part = coerce(bind(node.args["part_index"]), INT)
    if delim is None:
        return Lit(STRING, None)
    value = Call(STRING, "split_part", (s, Lit(STRING, str(delim)), part))
    if isinstance(part, Lit) and part.value != 0:
        return value
    # Spark's element_at of the split: index 0 fails for every non-NULL string, lazily
    zero = Call(BOOLEAN, "and", (Call(BOOLEAN, "is_not_null", (s,)), Call(BOOLEAN, "eq", (part, Lit(INT, 0)))))
    return Call(STRING, "error_if", (zero, value, Lit(STRING, INDEX_OF_ZERO)))


def _elt(node: exp.Expression, bind: Bind) -> Scalar:
    index = coerce(bind(node.this), INT)
    values = [_text(bind(e)) for e in node.expressions]
    if not values:
        raise SqlError("ELT needs at least one string after the index", span_of(node))
    k = len(values)
    if isinstance(index, Lit) and isinstance(index.value, int) and 1 <= index.value <= k:
        return values[index.value - 1]
    arms: list[Scalar] = []
    for i, v in enumerate(values, start=1):
        arms += [Call(BOOLEAN, "eq", (index, Lit(INT, i))), v]
    value = Call(STRING, "case", (*arms, Lit(STRING, None)))  # the others are not evaluated
    below, above = Call(BOOLEAN, "lt", (index, Lit(INT, 1))), Call(BOOLEAN, "gt", (index, Lit(INT, k)))
    outside = Call(BOOLEAN, "or", (below, above))
    message = (
        f"[INVALID_ARRAY_INDEX] The index {{value}} is out of bounds. The array has {k} elements. Use the SQL "
        "function `get()` to tolerate accessing element at invalid index and return NULL instead."
    )
    return Call(STRING, "error_if", (outside, value, Lit(STRING, message), index))


def _translate(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    source_node, target_node = node.args["from_"], node.args["to"]
    source = _constant_text(source_node, bind, "the characters to replace of TRANSLATE")
    target = _constant_text(target_node, bind, "the replacement characters of TRANSLATE")
    if source is None or target is None:
        return Lit(STRING, None)
    assert isinstance(source, str) and isinstance(target, str)
    mapping: dict[str, str] = {}
    for i, ch in enumerate(source):  # Spark: the first occurrence of a character counts
        mapping.setdefault(ch, target[i] if i < len(target) else "")
    # args: s, the characters replaced, their replacements (one each), the characters deleted
    replaced = "".join(k for k, v in mapping.items() if v)
    deleted = "".join(k for k, v in mapping.items() if not v)
    args = (s, Lit(STRING, replaced), Lit(STRING, "".join(mapping[k] for k in replaced)), Lit(STRING, deleted))
    return Call(STRING, "translate", args)


def _split(node: exp.Expression, bind: Bind) -> Scalar:
    s = _text(bind(node.this))
    pattern = _constant_text(node.expression, bind, "the pattern of SPLIT")
    limit_node = node.args.get("limit")
    limit = _constant(coerce(bind(limit_node), INT), limit_node, "the limit of SPLIT", int) if limit_node else -1
    if pattern is None or limit is None:
        return Lit(array_of(STRING), None)
    assert isinstance(pattern, str) and isinstance(limit, int)
    if pattern == "":  # Spark: the characters (the last holding the rest when limited)
        return Call(array_of(STRING), "split", (s, Lit(STRING, ""), Lit(INT, limit)))
    rewritten = _runtime_pattern(pattern, node.expression)
    if rewritten.end_anchor or _has_start_anchor(pattern):
        raise UnsupportedSql(
            f"regular expression '{pattern}': '^', '\\A' and '$' are not supported in SPLIT", span_of(node.expression)
        )
    _refuse_empty_matches(pattern, rewritten, "SPLIT", node.expression)
    return Call(array_of(STRING), "split", (s, Lit(STRING, rewritten.pattern), Lit(INT, limit)))


def _has_start_anchor(pattern: str) -> bool:
    """Whether a Java pattern has `^` or `\\A` (outside a character class, where `[^`
    negates)."""
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("A", i + 1) and not in_class:
                return True
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern.startswith("^", i + 1):
                i += 1
        elif c == "^":
            return True
        i += 1
    return False


def _predicate(fn: str) -> Rule:
    def rule(node: exp.Expression, bind: Bind) -> Scalar:
        return Call(BOOLEAN, fn, (_text(bind(node.this)), _text(bind(node.expression))))

    return rule


def _ascii(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(INT, "ascii", (_text(bind(node.this)),))


def _chr(node: exp.Expression, bind: Bind) -> Scalar:
    if len(node.expressions) != 1:
        raise SqlError("CHR takes one argument", span_of(node))
    return Call(STRING, "chr", (coerce(bind(node.expressions[0]), BIGINT),))


def _bit_length(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(INT, "bit_length", (_text(bind(node.this)),))


def _space(node: exp.Expression, bind: Bind) -> Scalar:
    return Call(STRING, "repeat", (Lit(STRING, " "), coerce(bind(node.this), INT)))


def _arguments(node: exp.Expression, name: str, counts: tuple[int, ...]) -> list[exp.Expression]:
    args = list(node.expressions)
    if len(args) not in counts:
        wanted = " or ".join(str(n) for n in counts)
        raise SqlError(f"{name} takes {wanted} argument{'s' if counts != (1,) else ''}, not {len(args)}", span_of(node))
    return args


def _btrim(node: exp.Expression, bind: Bind) -> Scalar:
    args = _arguments(node, "BTRIM", (1, 2))
    s = _text(bind(args[0]))
    if len(args) == 1:
        return Call(STRING, "trim", (s,))
    return Call(STRING, "btrim", (s, _text(bind(args[1]))))


def _octet_length(node: exp.Expression, bind: Bind) -> Scalar:
    (arg,) = _arguments(node, "OCTET_LENGTH", (1,))
    return Call(INT, "octet_length", (_text(bind(arg)),))


RULES: dict[type[exp.Expression], Rule] = {
    exp.Pad: _pad,
    exp.StrPosition: _position,
    exp.ConcatWs: _concat_ws,
    exp.RegexpExtract: _regexp_extract,
    exp.RegexpLike: _rlike,
    exp.Initcap: _unary("initcap"),
    exp.Reverse: _unary("reverse"),
    exp.Repeat: _repeat,
    exp.RegexpReplace: _regexp_replace,
    exp.SubstringIndex: _substring_index,
    exp.SplitPart: _split_part,
    exp.Elt: _elt,
    exp.Translate: _translate,
    exp.StartsWith: _predicate("startswith"),
    exp.EndsWith: _predicate("endswith"),
    exp.Contains: _predicate("contains"),
    exp.Ascii: _ascii,
    exp.Chr: _chr,
    exp.BitLength: _bit_length,
    exp.Space: _space,
    exp.RegexpSplit: _split,
}

# functions sqlglot parses as anonymous calls, by lower-case name
ANONYMOUS_RULES: dict[str, Rule] = {"btrim": _btrim, "octet_length": _octet_length}

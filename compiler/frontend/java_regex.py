r"""Spark's regular expressions (java.util.regex) rewritten for the runtime's engine (Rust's
regex crate, through polars), so that both match the same strings.

The two agree on most syntax but not on all meanings. The rewrite makes these exact:
- `.` does not match a line terminator in Java (\n, \r, \u0085, \u2028, \u2029); Rust's
  excludes \n only.
- `$` (outside MULTILINE) matches at the end, or before the line terminator that ends the
  input (\r\n, or one terminator character), in Java; Rust's only at the end. A `$` that
  ends the pattern becomes `\z`, and the caller also tries the input without its final
  terminator (`FINAL_TERMINATOR`); `$` anywhere else is refused.
- `\d \w \s` are ASCII in Java, Unicode in Rust.
- `\uhhhh` is Java's code-point escape; `\a` and `\e` are spelled out.

What has no exact counterpart is refused with its reason (ValueError): inline flags
(`(?i)`: Java's `s` and `U` differ from Rust's), look-around, back-references, possessive
quantifiers, atomic groups, `\b \B \Z \G \Q \p` and other escapes, nested or
intersected character classes, Rust's class operators (`--`, `~~`).
"""

from __future__ import annotations

from dataclasses import dataclass

_TERMINATORS = r"\n\r\x{85}\x{2028}\x{2029}"
# the line terminator that ends a string, as Java's `$` skips it (\r\n counts as one)
FINAL_TERMINATOR = rf"(?:\r\n|[{_TERMINATORS}])\z"
_ASCII_CLASSES = {"d": "0-9", "w": "a-zA-Z_0-9", "s": r" \t\n\x0B\f\r"}
_SIMPLE_ESCAPES = {"t": r"\t", "n": r"\n", "r": r"\r", "f": r"\f", "a": r"\x07", "e": r"\x1B"}
# characters Rust reads as syntax, escaped when Java means them literally
_RUST_META = set(r"\.+*?()|[]{}^$#&-~")


@dataclass(frozen=True)
class Rewritten:
    """A Java pattern for Rust's engine: the pattern, its capturing groups (numbered as in
    Java), and whether it ended with `$` (then it matches an input, or that input without
    its FINAL_TERMINATOR)."""

    pattern: str
    groups: int
    end_anchor: bool


def _hex(digits: str) -> bool:
    return bool(digits) and all(d in "0123456789abcdefABCDEF" for d in digits)


def java_to_rust(pattern: str) -> Rewritten:
    """What matches, on Rust's engine, what Java's `pattern` matches, or ValueError."""
    rewriter = _Rewriter(pattern)
    rust = rewriter.run()
    return Rewritten(rust, rewriter.groups, rewriter.end_anchor)


class _Rewriter:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.depth = 0
        self.groups = 0
        self.end_anchor = False
        self.out: list[str] = []

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            self.i += 1
            if c == "\\":
                self.out.append(self._escape(in_class=False))
            elif c == "[":
                self.out.append(self._class())
            elif c == ".":
                self.out.append(f"[^{_TERMINATORS}]")
            elif c == "$":
                if self.depth or self.i != len(p):
                    raise ValueError("'$' is supported only at the end of the pattern")
                self.out.append(r"\z")
                self.end_anchor = True
            elif c == "(":
                self._group()
            elif c == ")":
                self.depth -= 1
                self.out.append(")")
            elif c in "*+?":
                self.out.append(c)
                self._quantifier_suffix()
            elif c == "{":
                end = p.find("}", self.i)
                body = p[self.i : end] if end >= 0 else ""
                if end < 0 or not body or not all(ch.isdigit() or ch == "," for ch in body):
                    raise ValueError("'{' must start a repetition such as {2,3}")
                self.out.append("{" + body + "}")
                self.i = end + 1
                self._quantifier_suffix()
            elif c in _RUST_META and c not in "|^":
                self.out.append("\\" + c)  # `#`, `&`, `-`, `~`, `]`: literal in Java
            else:
                self.out.append(c)
        return "".join(self.out)

    def _quantifier_suffix(self) -> None:
        if self.i < len(self.p) and self.p[self.i] == "+":
            raise ValueError("possessive quantifiers (such as '*+') are not supported")
        if self.i < len(self.p) and self.p[self.i] == "?":  # lazy: the same in both
            self.out.append("?")
            self.i += 1

    def _group(self) -> None:
        p = self.p
        if p.startswith("?:", self.i):
            self.out.append("(?:")
            self.i += 2
        elif p.startswith("?<", self.i) and self.i + 2 < len(p) and p[self.i + 2] not in "=!":
            end = p.find(">", self.i)
            if end < 0:
                raise ValueError("unterminated group name")
            self.out.append("(?P<" + p[self.i + 2 : end] + ">")
            self.i = end + 1
            self.groups += 1
        elif p.startswith("?", self.i):
            raise ValueError("look-around, atomic groups and inline flags such as '(?i)' are not supported")
        else:
            self.out.append("(")
            self.groups += 1
        self.depth += 1

    def _escape(self, in_class: bool) -> str:
        p = self.p
        if self.i >= len(p):
            raise ValueError("the pattern ends with a lone '\\'")
        c = p[self.i]
        self.i += 1
        if c in _ASCII_CLASSES:
            return _ASCII_CLASSES[c] if in_class else f"[{_ASCII_CLASSES[c]}]"
        if c in "DWS" and not in_class:
            return f"[^{_ASCII_CLASSES[c.lower()]}]"
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "u":
            digits = p[self.i : self.i + 4]
            if len(digits) != 4 or not _hex(digits):
                raise ValueError("'\\u' needs four hex digits")
            self.i += 4
            return "\\x{" + digits + "}"
        if c == "x":
            if p.startswith("{", self.i):
                end = p.find("}", self.i)
                if end < 0:
                    raise ValueError("unterminated '\\x{'")
                digits, self.i = p[self.i + 1 : end], end + 1
            else:
                digits, self.i = p[self.i : self.i + 2], self.i + 2
            if not _hex(digits):
                raise ValueError("'\\x' needs hex digits")
            return "\\x{" + digits + "}"
        if c in ("A", "z") and not in_class:
            return "\\" + c
        if c.isascii() and c.isalnum():
            raise ValueError(f"the escape '\\{c}' is not supported")
        # an escaped symbol is that symbol in Java
        return "\\" + c if c in _RUST_META else c

    def _class(self) -> str:
        p = self.p
        parts = ["["]
        if p.startswith("^", self.i):
            parts.append("^")
            self.i += 1
        if p.startswith("]", self.i):
            raise ValueError("a character class that starts with ']' is not supported")
        while True:
            if self.i >= len(p):
                raise ValueError("unclosed character class")
            c = p[self.i]
            self.i += 1
            if c == "]":
                break
            if c == "[":
                raise ValueError("nested character classes are not supported")
            if c in "&~-" and p.startswith(c, self.i):
                raise ValueError(f"'{c}{c}' inside a character class is not supported")
            if c == "\\":
                if p.startswith(("D", "W", "S"), self.i):
                    raise ValueError("\\D, \\W and \\S inside a character class are not supported")
                parts.append(self._escape(in_class=True))
            elif c in "&~":
                parts.append("\\" + c)
            else:
                parts.append(c)
        parts.append("]")
        return "".join(parts)

"""Split a script into its program and its steps, at `-- step` lines.

Apart from runtime/script.py, which runs the steps, because `dbspc compile` and
`dbspc explain` need only the program: importing the runtime (polars, the kernels)
would cost them ~0.2 s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_STEP_LINE = re.compile(r"^[ \t]*--[ \t]*step[ \t]*$", re.IGNORECASE | re.MULTILINE)


@dataclass
class Script:
    """The program text and the text of each step, padded so positions stay true."""

    program: str
    steps: list[str]
    step_lines: list[int] = field(default_factory=list)  # line of each `-- step` marker


def split_script(text: str) -> Script:
    marks = [m for m in _STEP_LINE.finditer(text) if m.start() in _code_line_starts(text)]
    if not marks:
        return Script(text, [])
    program = text[: marks[0].start()]
    steps = []
    lines = [text.count("\n", 0, m.start()) + 1 for m in marks]
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        # blank out everything before the step so sqlglot reports file positions
        prefix = re.sub(r"[^\n]", "", text[: m.end()])
        steps.append(prefix + text[m.end() : end])
    return Script(program, steps, lines)


def _code_line_starts(text: str) -> set[int]:
    """Offsets of the lines that start outside a string literal, a quoted identifier and a
    block comment: only there can a `-- step` line be a marker rather than data."""
    starts = {0}
    quote = ""  # the open quote character, or "*" inside /* ... */
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote == "*":
            if text.startswith("*/", i):
                quote, i = "", i + 1
        elif quote:
            if ch == quote:
                if i + 1 < n and text[i + 1] == quote:  # a doubled quote is an escaped quote
                    i += 1
                else:
                    quote = ""
            elif ch == "\\" and quote == "'":
                i += 1  # Spark's backslash escapes in string literals
        elif ch in "'\"`":
            quote = ch
        elif text.startswith("/*", i):
            quote, i = "*", i + 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = (n if end < 0 else end) - 1
        if i + 1 < n and text[i] == "\n" and not quote:
            starts.add(i + 1)
        i += 1
    return starts

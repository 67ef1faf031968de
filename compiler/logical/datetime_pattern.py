"""The subset of Spark's datetime patterns (java.time's DateTimeFormatter letters) that
dbspc formats exactly as Spark 4 does; date_format checks its pattern here when it binds,
and the runtime builds the text from the parsed pieces.

Supported letters and counts (each checked against Spark 4):
  y yy yyy yyyy   proleptic year: as is; its last two digits; at least 3 or 4 digits with
                  a minus sign when negative (yyyy also a plus sign past 9999)
  M MM MMM MMMM   month: 5, 05, May, May (the full name)
  d dd            day of month; D DD DDD day of year (at least 1, 2, 3 digits)
  H HH            hour 0-23; h hh hour 1-12; a AM or PM
  m mm s ss       minute, second
  S .. SSSSSS     the first 1-6 digits of the fraction of the second (truncated)
  E EE EEE EEEE   day of the week: Sat (1-3 letters) or Saturday
Text in single quotes is written as is ('T'), two single quotes are one quote, and any
character other than an ASCII letter or one of [ ] { } # is written as is. Every other
letter or count is refused: Spark either fails on it or writes what dbspc does not.
"""

from __future__ import annotations

from dataclasses import dataclass

# letter -> the counts supported
_COUNTS = {
    "y": range(1, 5), "M": range(1, 5), "d": range(1, 3), "D": range(1, 4), "H": range(1, 3),
    "h": range(1, 3), "m": range(1, 3), "s": range(1, 3), "S": range(1, 7), "a": range(1, 2),
    "E": range(1, 5),
}  # fmt: skip
_RESERVED = "[]{}#"


@dataclass(frozen=True, slots=True)
class PatternError(Exception):
    """A pattern dbspc does not format: `message`, about the character at `offset`."""

    message: str
    offset: int


Piece = tuple[str, int] | str  # (letter, count) of a field, or literal text


def parse_pattern(pattern: str) -> list[Piece]:
    """The pieces of a Spark datetime pattern, or PatternError for one not supported."""
    out: list[Piece] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            if pattern.startswith("''", i):
                out.append("'")
                i += 2
                continue
            text, i = _quoted(pattern, i)
            out.append(text)
        elif ("a" <= ch <= "z") or ("A" <= ch <= "Z"):
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            count = j - i
            counts = _COUNTS.get(ch)
            if counts is None:
                raise PatternError(f"pattern letter '{ch}' is not supported", i)
            if count not in counts:
                raise PatternError(f"pattern letter '{ch}' repeated {count} times is not supported", i)
            out.append((ch, count))
            i = j
        elif ch in _RESERVED:
            raise PatternError(f"pattern character '{ch}' is not supported", i)
        else:
            out.append(ch)
            i += 1
    return _merged(out)


def _quoted(pattern: str, start: int) -> tuple[str, int]:
    """The text of the quoted literal opening at `start`, and where it ends."""
    text, i, n = "", start + 1, len(pattern)
    while i < n:
        if pattern.startswith("''", i):
            text += "'"
            i += 2
        elif pattern[i] == "'":
            return text, i + 1
        else:
            text += pattern[i]
            i += 1
    raise PatternError("the quote in the pattern is never closed", start)


def _merged(pieces: list[Piece]) -> list[Piece]:
    out: list[Piece] = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return out


# Parsing (to_date, to_timestamp): letter -> the counts supported
_PARSE_COUNTS = {
    "y": (1, 2, 4), "M": (1, 2, 3, 4), "d": (1, 2), "H": (1, 2), "h": (1, 2), "m": (1, 2), "s": (1, 2),
    "S": (1, 2, 3, 4, 5, 6), "a": (1,),
}  # fmt: skip
_NUMERIC_PARSE = frozenset("yMdHhmsS")


def parse_pieces(pattern: str) -> list[Piece]:
    """The pieces of a pattern to parse text with, or PatternError: the formatting subset
    less D, E and yyy, each letter at most once, a year and a month, h only with a, no
    field of varying width directly followed by a number (java.time's adjacent value
    parsing, which dbspc does not follow) and no number followed by a digit (java.time
    reads digits greedily, where a regular expression would backtrack)."""
    pieces = parse_pattern(pattern)
    seen: set[str] = set()
    offset = 0
    for i, p in enumerate(pieces):
        if isinstance(p, str):
            offset += len(p)
            continue
        letter, count = p
        if letter not in _PARSE_COUNTS:
            raise PatternError(f"pattern letter '{letter}' is not supported to parse with", 0)
        if count not in _PARSE_COUNTS[letter]:
            raise PatternError(f"pattern letter '{letter}' repeated {count} times is not supported to parse with", 0)
        if letter in seen:
            raise PatternError(f"pattern letter '{letter}' appears twice", 0)
        seen.add(letter)
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        varying = (count == 1 and letter != "a") or letter == "S"
        if varying and isinstance(nxt, tuple) and nxt[0] in _NUMERIC_PARSE:
            raise PatternError(f"pattern letter '{letter}' directly followed by '{nxt[0]}' is not supported", 0)
        if letter in _NUMERIC_PARSE and isinstance(nxt, str) and nxt[0].isdigit():
            raise PatternError(f"pattern letter '{letter}' directly followed by a digit is not supported", 0)
    if not {"y", "M"} <= seen:
        raise PatternError("a pattern to parse with needs a year (y) and a month (M)", 0)
    if ("h" in seen) != ("a" in seen):
        raise PatternError("a pattern to parse with has h (hour 1-12) with a (AM or PM) or neither", 0)
    if "H" in seen and "h" in seen:
        raise PatternError("a pattern to parse with has H or h, not both", 0)
    return pieces

"""Spark's (Java's) regular expressions on the runtime's engine (compiler/frontend/java_regex.py).

The fast tests pin the rewrite on cases whose Java answers are known (each checked on
Spark 4.1 by the Spark test below, which draws random patterns and strings and compares
every answer with Spark's RLIKE)."""

from __future__ import annotations

import random
from typing import Any

import polars as pl
import pytest

from dbspc.compiler.frontend.java_regex import java_to_rust
from dbspc.compiler.logical.scalar import Call, Col, Lit
from dbspc.compiler.types import BOOLEAN, STRING
from dbspc.runtime.string_functions import KERNELS


def rlike(strings: list[str | None], pattern: str) -> list[bool | None]:
    """The runtime's RLIKE of each string, through the kernel the views use."""
    r = java_to_rust(pattern)
    call = Call(BOOLEAN, "rlike", (Col(STRING, 0), Lit(STRING, r.pattern), Lit(BOOLEAN, r.end_anchor)))
    frame = pl.DataFrame({"s": strings}, schema={"s": pl.String})
    return frame.select(KERNELS["rlike"]([pl.col("s")], call)).to_series().to_list()


# (pattern, string, Java's answer)
CASES = [
    ("^a.c$", "abc", True),
    ("^a.c$", "abc\n", True),  # `$` before the final terminator
    ("^a.c$", "abc\r\n", True),
    ("^a.c$", "abc\n\n", False),  # only one final terminator
    ("^abc\\s$", "abc\r\n", False),  # no `$` between \r and \n
    ("^a.c$", "a\nc", False),  # `.` stops at line terminators
    ("^a.c$", "a\u2028c", False),
    ("^a.c$", "a\u0085c", False),
    ("^a.c", "a\tc", True),
    ("\\d", "\u0663", False),  # ARABIC-INDIC DIGIT THREE: not a Java \d
    ("\\w+$", "é", False),
    ("\\s", "\u00a0", False),  # no-break space
    ("[\\d]x", "1x", True),
    ("\\u0041", "A", True),
    ("a{2}", "xaay", True),
    ("a|b$", "zb\n", True),
    ("#", "#", True),
    ("a-b", "a-b", True),
    ("[a\\-z]", "-", True),
    ("(?<g>a)b", "ab", True),
]


@pytest.mark.parametrize(("pattern", "string", "expected"), CASES)
def test_rlike_matches_as_java_does(pattern: str, string: str, expected: bool) -> None:
    assert rlike([string, None], pattern) == [expected, None]


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a(?=b)", "look-around"),
        ("(?i)a", "inline flags"),
        ("a*+", "possessive"),
        ("\\bword", "escape '\\\\b'"),
        ("(a)\\1", "escape '\\\\1'"),
        ("[a[b]]", "nested"),
        ("[a&&b]", "'&&'"),
        ("a$b", "at the end"),
        ("(a$)", "at the end"),
    ],
)
def test_what_has_no_exact_rewrite_is_refused(pattern: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        java_to_rust(pattern)


def test_groups_are_counted_as_java_numbers_them() -> None:
    assert java_to_rust("(a)(?:b)(?<n>c)[(]").groups == 2


# -- against Spark ------------------------------------------------------------------------

_ATOMS = ["a", "b", ".", "\\d", "\\w", "\\s", "[ab]", "[^a]", "\\.", "-", "é", "\\u00e9", "[a-c\\d]"]
_CHARS = ["a", "b", "c", "1", " ", "\n", "\r", "\u2028", "\u0085", "é", ".", "-", "\t", "\u0663", "\u00a0"]


def _pattern(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        atom = rng.choice(_ATOMS)
        if rng.random() < 0.3:
            atom = f"({atom}{rng.choice(['', '|', '|b'])}{rng.choice(_ATOMS)})"
        parts.append(atom + rng.choice(["", "", "*", "+", "?", "{1,2}", "*?"]))
    return ("^" if rng.random() < 0.3 else "") + "".join(parts) + ("$" if rng.random() < 0.4 else "")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_random_patterns_match_as_spark_does(spark: Any) -> None:
    rng = random.Random(11)
    strings = ["".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 5))) for _ in range(40)]
    for _ in range(25):
        pattern = _pattern(rng)
        spark.createDataFrame([(s,) for s in strings], "s STRING").createOrReplaceTempView("rx")
        escaped = pattern.replace("\\", "\\\\").replace("'", "\\'")
        rows = spark.sql(f"SELECT s RLIKE '{escaped}' AS m FROM rx").collect()
        expected = [r["m"] for r in rows]
        assert rlike(strings, pattern) == expected, f"pattern {pattern!r}"

"""Spark's string functions of compiler/frontend/bind_strings.py, evaluated by the runtime.

The fast tests pin Java's replacement syntax, the refusals, and answers Spark 4 gave
(ANSI mode; each was run on Spark). The Spark tests draw random strings (characters
outside the BMP, line terminators, `$` and `\\` among them) and random patterns, and
compare every answer of the views with Spark's own."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dbspc.compiler.errors import RuntimeSqlError, UnsupportedSql
from dbspc.compiler.frontend.bind_strings import _has_start_anchor, java_replacement
from dbspc.runtime.script import run_script
from dbspc.runtime.zset import ZSet

Row = tuple[int, str | None, str | None, int | None]


def _quoted(text: str) -> str:
    """A Spark SQL string literal of `text`."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ours(exprs: list[str], rows: list[Row]) -> list[list[object]]:
    """Each row's values of `exprs` (over t(k, s, p, n)), in the order of k."""
    select = ", ".join(f"{e} AS e{i}" for i, e in enumerate(exprs))
    run = run_script(f"CREATE TABLE t (k INT, s STRING, p STRING, n INT);\nCREATE VIEW v AS SELECT k, {select} FROM t;")
    pipeline = run.pipeline
    out = pipeline.step({"t": ZSet.from_rows(rows, pipeline.table_types("t"), [1] * len(rows))})
    values = sorted((row for row, _ in out["v"].to_rows()), key=lambda r: r[0])
    return [[list(v) if isinstance(v, tuple) else v for v in row[1:]] for row in values]


def spark_values(spark: Any, exprs: list[str], rows: list[Row]) -> list[list[object]]:
    spark.createDataFrame(rows, "k INT, s STRING, p STRING, n INT").createOrReplaceTempView("t")
    select = ", ".join(f"{e} AS e{i}" for i, e in enumerate(exprs))
    return [list(r)[1:] for r in spark.sql(f"SELECT k, {select} FROM t ORDER BY k").collect()]


@pytest.mark.parametrize(
    ("replacement", "groups", "rust"),
    [
        ("$1$1", 1, "${1}${1}"),
        ("$10", 1, "${1}0"),  # Java takes a second digit only while it names a group
        ("$11-$12", 11, "${11}-${1}2"),
        ("\\$", 0, "$$"),
        ("\\x\\\\", 0, "x\\"),
        ("a$$b", 0, None),
        ("cost: $", 0, None),
        ("$a", 0, None),
        ("$2", 1, None),
        ("x\\", 0, None),
        ("${name}", 1, None),
    ],
)
def test_java_replacement(replacement: str, groups: int, rust: str | None) -> None:
    if rust is None:
        with pytest.raises(ValueError):
            java_replacement(replacement, groups)
    else:
        assert java_replacement(replacement, groups) == rust


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [("^a", True), ("a|^b", True), ("\\A", True), ("\\[^a", True), ("[^a]", False), ("\\^", False), ("[a^]", False)],
)
def test_start_anchors_are_found(pattern: str, anchored: bool) -> None:
    assert _has_start_anchor(pattern) is anchored


# (expression over s, s, Spark 4's answer)
SPARK_ANSWERS: list[tuple[str, str | None, object]] = [
    ("regexp_replace(s, '(b)', '$10')", "abc", "ab0c"),
    ("regexp_replace(s, '(b)', '\\\\$')", "abc", "a$c"),
    ("regexp_replace(s, '(x)?b', '[$1]')", "abc", "a[]c"),
    ("regexp_replace(s, 'b', 'X', 3)", "abcabc", "abcaXc"),
    ("regexp_replace(s, '^a', 'X', 4)", "abcabc", "abcXbc"),
    ("regexp_replace(s, 'c', 'X', 6)", "ab😀😀c", "ab😀😀c"),  # positions count characters
    ("regexp_replace(s, 'c', 'X', 5)", "ab😀😀c", "ab😀😀X"),
    ("regexp_replace(s, '.', 'X')", "a\nb", "X\nX"),
    ("regexp_replace(s, 'b', NULL)", "abc", None),
    ("substring_index(s, '.', -2)", "a.b.c", "b.c"),
    ("substring_index(s, '.', 0)", "a.b.c", ""),
    ("substring_index(s, '', 1)", "a.b.c", ""),
    ("substring_index(s, '😀', -1)", "é😀é😀", ""),
    ("split_part(s, ',', 2)", "a,b,,c,", "b"),
    ("split_part(s, ',', -1)", "a,b,,c,", ""),
    ("split_part(s, ',', -5)", "a,b,,c,", "a"),
    ("split_part(s, ',', 6)", "a,b,,c,", ""),
    ("split_part(s, '', -1)", "a,b", "a,b"),
    ("split_part(s, '', 2)", "a,b", ""),
    ("split_part(s, 'aa', 2)", "aaa", "a"),
    ("split_part(s, '😀', 2)", "x😀y😀", "y"),
    ("split_part(s, 1, 2)", "a1b1c", "b"),
    ("split_part(s, ',', NULL)", "a", None),
    ("elt(2, s, 'b', 'c')", "a", "b"),
    ("elt(1, s, NULL)", "é😀", "é😀"),
    ("elt(2, 1, 2.5)", "", "2.5"),
    ("elt(NULL, s)", "a", None),
    ("translate(s, 'aba', 'XYZ')", "abcabc", "XYcXYc"),
    ("translate(s, '😀é', 'éx')", "a😀é", "aéx"),
    ("ascii(s)", "😀", 128512),
    ("ascii(s)", "", 0),
    ("chr(321)", "", "A"),
    ("chr(-1)", "", ""),
    ("chr(256)", "", "\x00"),
    ("btrim(s, '')", "  ab  ", "  ab  "),
    ("btrim(s)", "\tab\t", "\tab\t"),
    ("octet_length(s)", "é😀a", 7),
    ("bit_length(s)", "é😀a", 56),
    ("split(s, ',')", "a,b,,c,,", ["a", "b", "", "c", "", ""]),
    ("split(s, ',', 3)", "a,b,c,", ["a", "b", "c,"]),
    ("split(s, '')", "", [""]),
    ("split(s, '', 2)", "abc", ["a", "bc"]),
    ("split(s, '😀')", "😀a😀", ["", "a", ""]),
    ("startswith(s, '')", "abc", True),
    ("s ILIKE 'A%'", "abc", True),
]


def test_answers_spark_gave() -> None:
    exprs = [e for e, _, _ in SPARK_ANSWERS]
    rows: list[Row] = [(i, s, None, None) for i, (_, s, _) in enumerate(SPARK_ANSWERS)]
    values = ours(exprs, rows)
    got = [values[i][i] for i in range(len(exprs))]
    assert got == [answer for _, _, answer in SPARK_ANSWERS]


@pytest.mark.parametrize(
    "expr",
    [
        "regexp_replace(s, 'a*', 'x')",  # an empty match: Java and Rust place them differently
        "regexp_replace(s, 'a$', 'x')",
        "regexp_replace(s, 'a', '$1')",
        "regexp_replace(s, p, 'x')",
        "split(s, '^a')",
        "split(s, ',?')",
        "substring_index(s, 'aba', 1)",
        "split_part(s, p, 1)",  # the delimiter must be a constant
        "translate(s, p, 'x')",
    ],
)
def test_refused(expr: str) -> None:
    with pytest.raises(UnsupportedSql):
        ours([expr], [])


def test_split_part_of_index_zero_is_sparks_error_only_where_it_is_evaluated() -> None:
    """Spark's element_at of the split: part 0 fails for a non-NULL string (answers as
    Spark 4 gave them), not for NULL, and not in a CASE branch not taken."""
    with pytest.raises(RuntimeSqlError, match=r"\[INVALID_INDEX_OF_ZERO\] The index 0 is invalid"):
        ours(["split_part(s, ',', n)"], [(0, "a,b", None, 0)])
    assert ours(["split_part(s, ',', 0)"], [(0, None, None, 0)]) == [[None]]
    lazy = "CASE WHEN n = 0 THEN 'z' ELSE split_part(s, ',', n) END"
    assert ours([lazy], [(0, "a,b", None, 0), (1, "a,b", None, 2)]) == [["z"], ["b"]]


def test_elt_outside_its_strings_is_sparks_ansi_error_and_only_the_chosen_one_is_evaluated() -> None:
    """Answers as Spark 4 (ANSI) gave them."""
    for n in (0, 3, -7):
        message = rf"\[INVALID_ARRAY_INDEX\] The index {n} is out of bounds. The array has 2 elements"
        with pytest.raises(RuntimeSqlError, match=message):
            ours(["elt(n, s, p)"], [(0, "a", "b", n)])
    assert ours(["elt(n, s, cast(p AS INT))"], [(0, "a", "zz", 1)]) == [["a"]]  # 'zz' is not cast


def test_trim_characters_refused_where_the_argument_order_is_not_spark() -> None:
    """sqlglot reads Hive's trim(a, b) as trim(b FROM a); Spark, which runs Hive's SQL, as
    trim(a FROM b)."""
    from dbspc.compiler.compile import compile_sql

    with pytest.raises(UnsupportedSql, match="explicit characters"):
        compile_sql("CREATE TABLE t (s STRING);\nCREATE VIEW v AS SELECT trim(s, 'ab') AS x FROM t;", "hive", True)


# -- against Spark ------------------------------------------------------------------------

_CHARS = ["a", "b", "A", "é", "É", "😀", ",", ".", " ", "1", "2", "\n", "\r", "\u2028", "$", "\\", "ß", "İ", "Σ", "\t"]
_EXPRESSIONS = [
    "regexp_replace(s, 'a|é', 'X')",
    "regexp_replace(s, '([ab])([0-9])', '$2$1', 2)",
    "regexp_replace(s, '[^a-z]+', '_', 3)",
    "regexp_replace(s, '(?:b|😀)\\\\.?', '[$0]')",
    "regexp_replace(s, '\\\\s', '\\\\$')",
    "substring_index(s, ',', n)",
    "substring_index(s, 'é,', n)",
    "substring_index(s, '😀', -2)",
    "split_part(s, ',', nullif(n, 0))",
    "split_part(s, 'é,', nullif(n % 4, 0))",
    "split_part(s, '', nullif(n, 0))",
    "split_part(s, '😀', -1)",
    "elt(abs(n % 3) + 1, s, p, 'c')",
    "CASE WHEN n BETWEEN 1 AND 3 THEN elt(n, s, p, NULL) ELSE 'out' END",
    "translate(s, 'aé😀,a\\n', 'Aε')",
    "split(s, ',', 2)",
    "split(s, '', 3)",
    "split(s, '[é😀]+')",
    "split(s, '.')",
    "ascii(s)",
    "chr(n)",
    "btrim(s, 'a😀 ')",
    "btrim(s, p)",
    "trim(LEADING p FROM s)",
    "trim(TRAILING 'a😀 ' FROM s)",
    "rtrim('é,', s)",
    "octet_length(s)",
    "startswith(s, p)",
    "endswith(s, p)",
    "contains(s, p)",
    "s ILIKE p",
    "s NOT ILIKE '%é_'",
    "space(n % 7)",
    "nvl2(p, n, length(s))",
    "isnull(s)",
]


def _rows(rng: random.Random, count: int) -> list[Row]:
    def text(chars: list[str], longest: int) -> str | None:
        return None if rng.random() < 0.05 else "".join(rng.choice(chars) for _ in range(rng.randint(0, longest)))

    pattern_chars = ["a", "A", "é", "😀", ",", " ", "%", "_", "1"]
    numbers = [-1000, -2, -1, 0, 1, 2, 3, 255, 256, 321, None]
    return [(k, text(_CHARS, 9), text(pattern_chars, 3), rng.choice(numbers)) for k in range(count)]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_random_strings_as_spark_answers(spark: Any) -> None:
    rows = _rows(random.Random(5), 200)
    assert ours(_EXPRESSIONS, rows) == spark_values(spark, _EXPRESSIONS, rows)


_ATOMS = ["a", "b", ".", "\\d", "\\w", "\\s", "[ab]", "[^a]", "\\.", "é", "😀", "[a-c\\d]", ","]


def _pattern(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        atom = rng.choice(_ATOMS)
        if rng.random() < 0.3:
            atom = f"({atom}{rng.choice(['', '|', '|b'])}{rng.choice(_ATOMS)})"
        parts.append(atom + rng.choice(["", "", "*", "+", "?", "{1,2}", "+?"]))
    return "".join(parts)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_random_patterns_replace_and_split_as_spark_does(spark: Any) -> None:
    """Which matches Java's replaceAll and split take (leftmost, then after the match)."""
    rng = random.Random(7)
    rows = _rows(rng, 40)
    exprs = []
    while len(exprs) < 30:
        pattern = _quoted(_pattern(rng))
        for expr in (f"regexp_replace(s, {pattern}, '<$0>')", f"split(s, {pattern})", f"split(s, {pattern}, 2)"):
            try:
                ours([expr], [])
            except UnsupportedSql:
                continue  # an empty-matching pattern
            exprs.append(expr)
    assert ours(exprs, rows) == spark_values(spark, exprs, rows)

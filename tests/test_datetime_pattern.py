"""The datetime pattern subset (compiler/logical/datetime_pattern.py): what date_format
and to_date accept, and what they refuse (Spark's answers are checked by the Spark golden
sql_tests/date_functions_more.sql)."""

from __future__ import annotations

import pytest

from dbspc.compiler.logical.datetime_pattern import PatternError, parse_pattern, parse_pieces


def test_pieces_of_a_pattern() -> None:
    assert parse_pattern("yyyy-MM-dd'T'HH:mm") == [("y", 4), "-", ("M", 2), "-", ("d", 2), "T", ("H", 2), ":", ("m", 2)]
    assert parse_pattern("yyyy''MM 'it''s'") == [("y", 4), "'", ("M", 2), " it's"]
    assert parse_pattern("") == []
    assert parse_pattern("E, d MMM é") == [("E", 1), ", ", ("d", 1), " ", ("M", 3), " é"]


@pytest.mark.parametrize(
    ("pattern", "message", "offset"),
    [
        ("yyyy-MM-dd Q", "pattern letter 'Q' is not supported", 11),
        ("ddd", "pattern letter 'd' repeated 3 times is not supported", 0),
        ("yyyyy", "pattern letter 'y' repeated 5 times is not supported", 0),
        ("SSSSSSS", "pattern letter 'S' repeated 7 times is not supported", 0),
        ("yyyy [x]", "pattern character '[' is not supported", 5),
        ("yyyy 'abc", "the quote in the pattern is never closed", 5),
    ],
)
def test_refused_patterns(pattern: str, message: str, offset: int) -> None:
    with pytest.raises(PatternError) as e:
        parse_pattern(pattern)
    assert (e.value.message, e.value.offset) == (message, offset)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyy-DDD", "pattern letter 'D' is not supported to parse with"),
        ("yyyy-MM-dd E", "pattern letter 'E' is not supported to parse with"),
        ("yyyyMd", "pattern letter 'M' directly followed by 'd' is not supported"),
        ("yyyy'1'MM", "pattern letter 'y' directly followed by a digit is not supported"),
        ("MM-dd", "a pattern to parse with needs a year (y) and a month (M)"),
        ("yyyy-MM-dd hh", "a pattern to parse with has h (hour 1-12) with a (AM or PM) or neither"),
        ("yyyy-MM-yyyy", "pattern letter 'y' appears twice"),
    ],
)
def test_refused_parse_patterns(pattern: str, message: str) -> None:
    with pytest.raises(PatternError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_pieces(pattern)


def test_parse_patterns() -> None:
    assert parse_pieces("yyyyMMdd") == [("y", 4), ("M", 2), ("d", 2)]
    assert parse_pieces("dd MMMM yy hh:mm a")[-1] == ("a", 1)

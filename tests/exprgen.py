"""Random scalar expressions over edge values, dbspc against Spark row by row: a soak.

tests/viewgen.py draws whole views from values where DuckDB and Spark agree; this draws
one expression at a time, nested up to three deep, from about 200 of Spark's functions
and operators, over one table whose rows hold the values where engines differ: INT_MIN
and INT_MAX, NaN, -0.0, 1e10, the years 1 and 9999, 29 February, empty, padded and
non-ASCII strings, and NULLs. Each expression is the view `SELECT id, <expr> FROM t`,
stepped with every row and compared with Spark's answer (values up to float rounding),
or with Spark's error: both must fail, or neither.

    .venv/bin/python -m tests.exprgen --seed 1 --count 400

It prints each disagreement and a tally. What it cannot judge is skipped: a view dbspc
refuses at compile time (unless Spark answers it while dbspc called it failing, which
is printed) and values past Python's datetime (Spark's answer cannot come back).
On 2026-11-30, seeds 1-7 (about 2,500 expressions) found the divergences listed in
docs/conformance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import warnings
from collections import Counter
from decimal import Decimal
from typing import Any

from dbspc.compiler.errors import DbspcError, SparkExtension
from dbspc.runtime.oracle import assert_same_rows, spark_views
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet

DDL = (
    "CREATE TABLE t (id INT, i INT, j BIGINT, s STRING, d DECIMAL(10,3), f DOUBLE, dt DATE, ts TIMESTAMP, b BOOLEAN);\n"
)
_TS = dt.datetime
ROWS: list[tuple[Any, ...]] = [
    (1, 0, 0, "", Decimal("0.000"), 0.0, dt.date(2024, 2, 29), _TS(2024, 2, 29, 23, 59, 59, 123456), True),
    (2, 1, 1, "a", Decimal("1.500"), -0.0, dt.date(1970, 1, 1), _TS(1970, 1, 1), False),
    (3, -1, -1, "A b,c", Decimal("-2.250"), 1.5, dt.date(2023, 12, 31), _TS(2023, 12, 31, 12), None),
    (4, 7, 3000000000, "12", Decimal("999.999"), -3.75, dt.date(1, 1, 1), _TS(2000, 6, 15, 1, 2, 3), True),
    (5, 2**31 - 1, 2**63 - 1, "-3.50", Decimal("-0.001"), 1e10, dt.date(9999, 12, 31), _TS(1999, 12, 31), False),
    (6, -(2**31), -(2**63), " x ", Decimal("12.345"), float("nan"), dt.date(2000, 3, 1), _TS(2024, 3, 10, 2, 30), True),
    (7, None, None, None, None, None, None, None, None),
    (8, 3, 2, "héllo wörld", Decimal("3.000"), 2.5, dt.date(2024, 1, 31), _TS(2024, 1, 31, 0, 0, 0, 1), False),
    (9, -7, -3, "aaa", Decimal("-999.999"), -1e-5, dt.date(2024, 12, 31), _TS(1969, 12, 31, 23, 59, 59, 999999), True),
    (10, 10, 86400, "2024-02-29", Decimal("0.500"), 0.5, dt.date(2022, 2, 28), _TS(2024, 11, 3, 1, 30), None),
]

# Leaves by type (I INT, J BIGINT, S STRING, D DECIMAL, F DOUBLE, DT DATE, TS TIMESTAMP, B BOOLEAN).
COLUMNS = {"I": ["i", "id"], "J": ["j"], "S": ["s"], "D": ["d"], "F": ["f"], "DT": ["dt"], "TS": ["ts"], "B": ["b"]}
LITERALS = {
    "I": ["0", "1", "-1", "2", "3", "10", "-7", "2147483647", "CAST(NULL AS INT)"],
    "J": ["CAST(5 AS BIGINT)", "3000000000", "-1", "9223372036854775807"],
    "S": [
        "''",
        "'a'",
        "'A b'",
        "'abc'",
        "','",
        "'12'",
        "'-3.50'",
        "'2024-02-29'",
        "' x '",
        "'héllo'",
        "CAST(NULL AS STRING)",
    ],
    "D": ["0.000", "1.5", "-2.25", "999.999", "0.001"],
    "F": ["0.0D", "-0.0D", "1.5D", "1e10D", "-3.75D", "CAST('NaN' AS DOUBLE)"],
    "DT": ["DATE'2024-02-29'", "DATE'1970-01-01'", "DATE'2023-01-31'", "DATE'9999-12-31'"],
    "TS": ["TIMESTAMP'2024-02-29 23:59:59.123456'", "TIMESTAMP'1970-01-01 00:00:00'"],
    "B": ["TRUE", "FALSE", "CAST(NULL AS BOOLEAN)"],
}


def _templates(text: str) -> list[str]:
    return [t.strip() for t in text.split(";") if t.strip()]


# Templates by result type; a capital type name is a hole of that type. Lengths of
# padding and repetition are small constants: lpad(s, 2^31 - 1, s) takes gigabytes in
# any engine (Spark's driver runs out of memory).
CALLS: dict[str, list[str]] = {
    "I": _templates(
        "I + I; I - I; I * I; I div I; I % I; pmod(I, I); abs(I); -I; shiftleft(I, I); shiftright(I, I); "
        "I & I; I | I; I ^ I; ~I; greatest(I, I); least(I, I, I); length(S); instr(S, S); "
        "locate(S, S, I); ascii(S); year(DT); month(DT); day(DT); dayofweek(DT); dayofyear(DT); "
        "weekofyear(DT); quarter(DT); hour(TS); minute(TS); second(TS); datediff(DT, DT); "
        "CAST(S AS INT); CAST(D AS INT); CAST(F AS INT); CAST(J AS INT); try_cast(S AS INT); "
        "bit_count(I); nvl(I, I); if(B, I, I); CASE WHEN B THEN I ELSE I END; coalesce(I, I); "
        "nullif(I, I); try_add(I, I); try_multiply(I, I); size(split(S, ',')); octet_length(S); "
        "bit_length(S); weekday(DT); unix_date(DT); char_length(S); find_in_set(S, S); CAST(B AS INT); "
        "ceil(D); floor(D)"
    ),
    "J": _templates(
        "J + J; J * I; J - I; CAST(S AS BIGINT); unix_seconds(TS); unix_millis(TS); J div J; abs(J); "
        "shiftrightunsigned(J, I); CAST(F AS BIGINT); unix_timestamp(TS); J % I"
    ),
    "S": _templates(
        "upper(S); lower(S); substring(S, I, I); substr(S, I); concat(S, S); concat_ws(S, S, S); "
        "trim(S); ltrim(S); rtrim(S); lpad(S, 5, S); rpad(S, 4, S); repeat(S, 3); reverse(S); "
        "replace(S, S, S); translate(S, S, S); initcap(S); left(S, I); right(S, I); split_part(S, S, I); "
        "substring_index(S, S, I); regexp_replace(S, 'a+', 'X'); regexp_extract(S, '([a-z]+)', 1); "
        "CAST(I AS STRING); CAST(D AS STRING); CAST(F AS STRING); CAST(DT AS STRING); "
        "CAST(TS AS STRING); date_format(TS, 'yyyy-MM-dd HH:mm:ss'); date_format(DT, 'EEE MMM d yy'); "
        "chr(I); elt(I, S, S); btrim(S); S || S; space(3); CAST(J AS STRING); CAST(B AS STRING); "
        "dayname(DT); monthname(DT); typeof(S); trim(BOTH S FROM S); overlay(S PLACING S FROM I); "
        "format_string('%d', I); ucase(S); regexp_replace(S, '([A-Z])', '<$1>'); "
        "CAST(CAST(S AS DECIMAL(10,3)) AS STRING); nvl2(S, S, S)"
    ),
    "D": _templates(
        "D + D; D - D; D * D; D / D; round(D, I); bround(D, I); floor(D); ceil(D); "
        "CAST(S AS DECIMAL(10,3)); CAST(I AS DECIMAL(10,3)); abs(D); -D; D % D; pmod(D, D); D + I; "
        "D * I; D / I; CAST(F AS DECIMAL(10,3)); try_divide(D, D); greatest(D, D); "
        "CAST(D AS DECIMAL(5,1)); D * 1.00001; round(D)"
    ),
    "F": _templates(
        "F / F; sqrt(F); ln(F); exp(F); power(F, F); round(F, I); CAST(S AS DOUBLE); CAST(I AS DOUBLE); "
        "I / I; F * F; atan2(F, F); log(F, F); nanvl(F, F); cbrt(F); degrees(F); F + D; "
        "CAST(D AS DOUBLE); log10(F); sign(F); rint(F); bround(F, I); F % F; pmod(F, F); floor(F); "
        "ceil(F); greatest(F, F); least(F, F)"
    ),
    "DT": _templates(
        "date_add(DT, I); date_sub(DT, I); add_months(DT, I); last_day(DT); next_day(DT, 'Mon'); "
        "trunc(DT, 'MM'); make_date(I, I, I); to_date(S); CAST(TS AS DATE); date_from_unix_date(I); "
        "DT + I; DT - I; CAST(S AS DATE); try_to_date(S); date_trunc('YEAR', DT)"
    ),
    "TS": _templates(
        "CAST(DT AS TIMESTAMP); date_trunc('HOUR', TS); TS + INTERVAL 1 DAY; timestamp_seconds(J); "
        "to_timestamp(S); make_timestamp(I, I, I, I, I, D); TS - INTERVAL 3 HOURS; CAST(S AS TIMESTAMP); "
        "timestamp_millis(J); date_trunc('WEEK', TS); TS + INTERVAL 1 MONTH"
    ),
    "B": _templates(
        "I < I; S = S; S LIKE 'a%'; S RLIKE '^a'; B AND B; B OR B; NOT B; I IN (1, 2, NULL); "
        "I BETWEEN I AND I; isnull(S); S IS NULL; startswith(S, S); contains(S, S); D > D; F = F; "
        "DT < DT; I <=> I; S < S; S ILIKE 'A%'; F > F; S = I; D = F; I = D; S IN ('a', '12'); TS > DT; "
        "endswith(S, S); B = B; isnotnull(F); S NOT LIKE '%b%'; isnan(F)"
    ),
}
_HOLES = ("TS", "DT", "I", "J", "S", "D", "F", "B")


def expression(rng: random.Random, kind: str, depth: int) -> str:
    """A random expression of type `kind`, calls nested up to `depth` deep."""
    if depth <= 0 or rng.random() < 0.3:
        return rng.choice(COLUMNS[kind]) if rng.random() < 0.7 else rng.choice(LITERALS[kind])
    template, out, at = rng.choice(CALLS[kind]), [], 0
    while at < len(template):
        hole = next((h for h in _HOLES if _hole_at(template, at, h)), None)
        if hole is None:
            out.append(template[at])
            at += 1
        else:
            out.append(f"({expression(rng, hole, depth - 1)})")
            at += len(hole)
    return "".join(out)


def _hole_at(template: str, at: int, hole: str) -> bool:
    end = at + len(hole)
    if not template.startswith(hole, at):
        return False
    alone_before = at == 0 or not template[at - 1].isalnum()
    alone_after = end == len(template) or not template[end].isalnum()
    return alone_before and alone_after


def compare(spark: Any, query: str) -> str:
    """'same', 'both failed', 'refused', 'skipped', or a description of the disagreement."""
    try:
        pipeline = Pipeline.from_sql(f"{DDL}CREATE VIEW v AS {query};")
    except DbspcError as e:
        if "whatever its rows" in e.message and _spark_rows(spark, Pipeline.from_sql(DDL), query) is not None:
            return f"dbspc refuses, Spark answers: {e.message}"
        return "refused"
    table = ZSet.from_rows(ROWS, pipeline.table_types("t"))
    try:
        ours: ZSet | None = pipeline.step({"t": table})["v"]
        our_error = None
    except DbspcError as e:
        ours, our_error = None, str(e)
    try:
        theirs: Any = spark_views(spark, pipeline, {"t": table})["v"]
        their_error = None
    except Exception as e:  # (any of Spark's errors: that it fails is what is compared)
        theirs, their_error = None, str(e).split("\n")[0][:200]
    if their_error is not None and ("out of range" in their_error or "must have magnitude" in their_error):
        return "skipped"  # (a date past Python's datetime: Spark's answer cannot come back)
    if our_error is not None or their_error is not None:
        if our_error is not None and their_error is not None:
            return "both failed"
        return f"dbspc: {our_error or 'answers'}; Spark: {their_error or 'answers'}"
    assert ours is not None
    try:
        assert_same_rows(ours, theirs, query)
    except AssertionError as e:
        return str(e)[:1500]
    return "same"


def _spark_rows(spark: Any, pipeline: Pipeline, query: str) -> Any:
    try:
        spark_views(spark, pipeline, {"t": ZSet.from_rows(ROWS, pipeline.table_types("t"))})
        return spark.sql(query).collect()
    except Exception:  # (Spark fails it too)
        return None


def main() -> None:
    warnings.simplefilter("ignore", SparkExtension)
    parser = argparse.ArgumentParser(description="random expressions, dbspc against Spark")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    from dbspc.runtime.spark.session import local_session

    spark = local_session("dbspc-exprgen")
    rng = random.Random(args.seed)
    tally: Counter[str] = Counter()
    for _ in range(args.count):
        kind = rng.choice(list(CALLS))
        query = f"SELECT id, {expression(rng, kind, rng.randint(1, 3))} AS e FROM t"
        outcome = compare(spark, query)
        if outcome in ("same", "both failed", "refused", "skipped"):
            tally[outcome] += 1
            continue
        tally["differ"] += 1
        print(f"DIFFER {query}\n  {outcome}", flush=True)
    print(dict(tally))


if __name__ == "__main__":
    main()

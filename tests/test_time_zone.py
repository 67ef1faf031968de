"""The session time zone pass (compiler/logical/time_zone.py) and its runtime kernels.

Spark's answers under a non-UTC session are checked in tests/test_spark_session.py;
here the conversions are checked against Python's zoneinfo (java.time's rules for a
skipped or repeated local time are fold=0's), and the pass is shown in the dump.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.circuit.dump import to_text
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import RuntimeSqlError, UnsupportedSql, UsageError
from dbspc.compiler.logical.scalar import Call, Col, Lit
from dbspc.compiler.logical.time_zone import zone_id
from dbspc.compiler.types import STRING, TIMESTAMP
from dbspc.runtime.expressions import compile_scalars
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet

ZONE = "America/Los_Angeles"
PROGRAM = """
CREATE TABLE ev (id INT, ts TIMESTAMP);
CREATE VIEW v AS SELECT id, CAST(ts AS DATE) AS d, hour(ts) AS h, ts + INTERVAL 1 HOUR AS later
FROM ev WHERE ts >= TIMESTAMP '2024-03-10 02:30:00';
"""


def test_utc_names_and_offsets() -> None:
    for utc in ("UTC", "Etc/UTC", "GMT", "Z", "+00:00", "utc"):
        assert zone_id(utc) is None
    assert zone_id("+02:00") == "Etc/GMT-2"
    assert zone_id("-05:00") == "Etc/GMT+5"
    assert zone_id("Europe/Berlin") == "Europe/Berlin"
    with pytest.raises(UsageError, match="unknown session time zone 'Mars/Olympus'"):
        zone_id("Mars/Olympus")
    with pytest.raises(UsageError, match="whole-hour offsets"):
        zone_id("+05:30")


def test_the_pass_shows_in_the_circuit_and_leaves_utc_alone() -> None:
    utc = to_text(compile_sql(PROGRAM).circuit)
    zoned = to_text(compile_sql(PROGRAM, time_zone=ZONE).circuit)
    assert "from_utc" not in utc and ZONE not in utc
    assert f"hour(from_utc(#1, '{ZONE}'))" in zoned
    assert "2024-03-10 10:30:00" in zoned  # 02:30 is skipped in Los Angeles: moved by the gap
    assert "2024-03-10 02:30:00" in utc
    # adding hours moves the instant, not the wall clock: no conversion
    assert "zoned_offset_by" not in zoned


def test_a_view_computes_in_the_zone() -> None:
    pipeline = Pipeline.from_sql(PROGRAM, time_zone=ZONE)
    ts = [dt.datetime(2024, 3, 10, 10, 30), dt.datetime(2024, 3, 11, 6, 59), dt.datetime(2024, 3, 10, 10, 29)]
    out = pipeline.step({"ev": ZSet.from_rows([(i, t) for i, t in enumerate(ts)], pipeline.table_types("ev"))})["v"]
    rows = sorted(out.frame.rows())
    assert rows == [
        (0, dt.date(2024, 3, 10), 3, dt.datetime(2024, 3, 10, 11, 30), 1),
        (1, dt.date(2024, 3, 10), 23, dt.datetime(2024, 3, 11, 7, 59), 1),
    ]


def _evaluate(expr: Call, values: list[dt.datetime]) -> list[dt.datetime | None]:
    exprs, _ = compile_scalars([expr])
    frame = pl.DataFrame({"c0": pl.Series(values, dtype=pl.Datetime("us"))})
    return frame.select(exprs[0].alias("out"))["out"].to_list()


_instants = st.datetimes(min_value=dt.datetime(1990, 1, 1), max_value=dt.datetime(2040, 1, 1))
_ZONES = ["America/Los_Angeles", "Europe/London", "Australia/Lord_Howe", "Asia/Kolkata", "America/Santiago"]


@settings(max_examples=60, deadline=None)
@given(st.lists(_instants, min_size=1, max_size=30), st.sampled_from(_ZONES))
def test_kernels_agree_with_zoneinfo(values: list[dt.datetime], zone: str) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    utc = dt.UTC
    # (fold=0: a timestamp column holds no fold, and Spark reads a time in a gap or an
    # overlap as the earlier offset; hypothesis also draws fold=1)
    values = [v.replace(microsecond=0, fold=0) for v in values]
    local = _evaluate(Call(TIMESTAMP, "from_utc", (Col(TIMESTAMP, 0), Lit(STRING, zone))), values)
    assert local == [v.replace(tzinfo=utc).astimezone(tz).replace(tzinfo=None) for v in values]
    back = _evaluate(Call(TIMESTAMP, "to_utc", (Col(TIMESTAMP, 0), Lit(STRING, zone))), values)
    assert back == [v.replace(tzinfo=tz).astimezone(utc).replace(tzinfo=None) for v in values]


def test_dates_are_left_alone() -> None:
    """trunc(d, unit), date_add, a DATE's parts and DATE literals know no time zone."""
    text = """
    CREATE TABLE t (d DATE);
    CREATE VIEW v AS SELECT trunc(d, 'MONTH') AS m, year(d) AS y, date_add(d, 1) AS n, DATE '2024-03-10' AS lit FROM t;
    """
    assert to_text(compile_sql(text, time_zone=ZONE).circuit) == to_text(compile_sql(text).circuit)


def test_a_wall_clock_of_no_zone_meets_the_zone_only_beside_an_instant() -> None:
    """TIMESTAMP_NTZ's parts, intervals and literals are its own wall clock in any zone;
    a cast to TIMESTAMP (also an implicit one, beside an instant) reads it in the session's
    zone, and a TIMESTAMP cast to it is the zone's wall clock (checked against Spark in
    tests/test_spark_session.py). 02:30 on 2024-03-10 does not exist in Los Angeles: as
    an instant it is 03:30 PDT, 10:30 UTC."""
    text = """
    CREATE TABLE t (n TIMESTAMP_NTZ, l TIMESTAMP);
    CREATE VIEW v AS SELECT hour(n) AS h, n + INTERVAL 1 DAY AS d1, CAST(n AS TIMESTAMP) AS nl,
      CAST(l AS TIMESTAMP_NTZ) AS ln, n < l AS before, unix_timestamp(n) AS u FROM t;
    """
    zoned = to_text(compile_sql(text, time_zone=ZONE).circuit)
    assert "hour(#0)" in zoned and "offset_by(#0, '1d')" in zoned  # no conversion of the wall clock
    assert f"to_utc(cast(#0 AS TIMESTAMP), '{ZONE}')" in zoned
    assert f"cast(from_utc(#1, '{ZONE}') AS TIMESTAMP_NTZ)" in zoned
    # Spark's optimizer compares a wall clock with an instant literal as wall clocks
    unwrapped = text.replace("n < l AS before", "n = TIMESTAMP '2024-03-10 03:30:00' AS before")
    assert "(#0 = 2024-03-10 03:30:00)" in to_text(compile_sql(unwrapped, time_zone=ZONE).circuit)
    row = (dt.datetime(2024, 3, 10, 2, 30), dt.datetime(2024, 3, 10, 10, 0))
    pipeline = Pipeline.from_sql(text, time_zone=ZONE)
    out = pipeline.step({"t": ZSet.from_rows([row], pipeline.table_types("t"))})["v"]
    assert out.frame.rows() == [
        (2, dt.datetime(2024, 3, 11, 2, 30), dt.datetime(2024, 3, 10, 10, 30), dt.datetime(2024, 3, 10, 3, 0), False,
         1710037800, 1)
    ]  # fmt: skip


def test_epoch_seconds_of_a_date_are_of_its_local_midnight() -> None:
    """unix_timestamp(d) is d's midnight in the session's zone, and of a string, the
    instant of the local time it names; of the current time it is refused."""
    text = "CREATE TABLE t (d DATE, s STRING);\n"
    text += "CREATE VIEW v AS SELECT unix_timestamp(d) AS u, unix_timestamp(s) AS us FROM t;\n"
    row = ZSet.from_rows([(dt.date(2024, 3, 10), "2024-03-10 00:00:00")], Pipeline.from_sql(text).table_types("t"))
    for zone, seconds in (("UTC", 1710028800), (ZONE, 1710028800 + 8 * 3600)):
        out = Pipeline.from_sql(text, time_zone=zone).step({"t": row})["v"]
        assert out.frame.rows() == [(seconds, seconds, 1)]
    with pytest.raises(UnsupportedSql, match=r"CURRENT_TIMESTAMP is not allowed in a view"):
        compile_sql("CREATE TABLE t (s STRING);\nCREATE VIEW v AS SELECT unix_timestamp() AS u FROM t;")


def test_seconds_past_a_timestamp_s_range_overflow_as_in_spark() -> None:
    text = "CREATE TABLE t (n BIGINT);\nCREATE VIEW v AS SELECT timestamp_seconds(n) AS ts FROM t;\n"
    pipeline = Pipeline.from_sql(text)
    ok = pipeline.step({"t": ZSet.from_rows([(9_223_372_036_854,)], pipeline.table_types("t"))})["v"]
    assert len(ok) == 1
    with pytest.raises(RuntimeSqlError, match="DATETIME_OVERFLOW"):
        pipeline.step({"t": ZSet.from_rows([(-9_223_372_036_855,)], pipeline.table_types("t"))})


def test_date_format_and_months_between_read_the_zone_s_wall_clock() -> None:
    """date_format formats the local time; months_between takes local dates and the
    seconds since the local day's start instant (2.5 hours into 2024-03-10 at 03:30 in
    Los Angeles: the clock skipped an hour), as Spark's DateTimeUtils.monthsBetween."""
    text = (
        "CREATE TABLE ev (ts TIMESTAMP);\n"
        "CREATE VIEW v AS SELECT date_format(ts, 'yyyy-MM-dd HH:mm a E') AS f, "
        "months_between(ts, DATE '2024-02-11', false) AS mb, "
        "date_format(DATE '2024-03-10', 'HH:mm') AS midnight FROM ev;\n"
    )
    zoned = to_text(compile_sql(text, time_zone=ZONE).circuit)
    assert f"date_format(from_utc(#0, '{ZONE}')" in zoned and "zoned_months_between" in zoned
    pipeline = Pipeline.from_sql(text, time_zone=ZONE)
    row = ZSet.from_rows([(dt.datetime(2024, 3, 10, 10, 30),)], pipeline.table_types("ev"))
    (f, mb, midnight, _), = pipeline.step({"ev": row})["v"].frame.rows()
    assert f == "2024-03-10 03:30 AM Sun" and midnight == "00:00"
    assert mb == 1 + (-86_400 + 9_000) / (31 * 86_400)
    utc = Pipeline.from_sql(text).step({"ev": row})["v"].frame.rows()
    assert utc[0][:2] == ("2024-03-10 10:30 AM Sun", 1 + (-86_400 + 37_800) / (31 * 86_400))

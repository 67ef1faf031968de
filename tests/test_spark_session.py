"""A SparkPipeline follows its Spark session's settings, or refuses those it cannot.

It computes in the session's `spark.sql.session.timeZone`: the timestamps of
the test straddle the clock changes of America/Los_Angeles (a skipped hour, a repeated
one), and the same views run in a zone with a half-hour offset and in a fixed offset.
After each refresh (inserts, then deletes) every view equals Spark SQL over the source.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbspc.compiler.errors import RuntimeSqlError, UsageError
from dbspc.runtime.spark import SparkPipeline
from tests.test_spark_pipeline import spark_rows

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
_names = itertools.count()

VIEWS = {
    "casts": "SELECT id, CAST(ts AS DATE) AS d, CAST(ts AS STRING) AS s, CAST(d AS TIMESTAMP) AS dts, "
    "CAST(s AS TIMESTAMP) AS sts, to_date(ts) AS td FROM ev",
    "parts": "SELECT id, year(ts) AS y, month(ts) AS m, day(ts) AS dd, dayofweek(ts) AS w, quarter(ts) AS q, "
    "hour(ts) AS h, minute(ts) AS mi, second(ts) AS se FROM ev",
    "truncs": "SELECT id, date_trunc('HOUR', ts) AS h, date_trunc('DAY', ts) AS d, date_trunc('WEEK', ts) AS w, "
    "date_trunc('MONTH', ts) AS m, date_trunc('MINUTE', ts) AS mi FROM ev",
    "intervals": "SELECT id, ts + INTERVAL 1 DAY AS d1, ts - INTERVAL 1 DAY AS d_1, ts + INTERVAL 36 HOURS AS h36, "
    "ts - INTERVAL 25 HOURS AS h_25, ts + INTERVAL 90 MINUTES AS m90, ts + INTERVAL 1 MONTH AS mo1, "
    "ts - INTERVAL 1 YEAR AS y_1 FROM ev",
    "compare": "SELECT id, ts > d AS after_day, ts = TIMESTAMP '2024-03-10 01:30:00' AS lit, "
    "ts >= TIMESTAMP '2024-11-03 01:30:00' AS lit2, datediff(ts, d) AS dd FROM ev "
    "WHERE ts < TIMESTAMP '2025-01-01 00:00:00'",
    "per_day": "SELECT CAST(ts AS DATE) AS day, hour(ts) AS h, COUNT(*) AS n FROM ev "
    "GROUP BY CAST(ts AS DATE), hour(ts)",
    "calendar": "SELECT id, date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS a E D') AS f, "
    "date_format(d, 'yyyy-MM-dd HH:mm') AS fd, "
    "months_between(ts, d) AS mb, months_between(s, ts, false) AS ms, "
    "months_between(ts, TIMESTAMP '2024-03-10 01:30:00') AS mc, weekday(ts) AS wd, next_day(ts, 'SU') AS nd, "
    "dayname(ts) AS dn, date_part('hour', ts) AS ph, date_part('doy', ts) AS pd, unix_millis(ts) AS um, "
    "make_timestamp(2024, 3, 10, hour(ts), minute(ts), 0) AS gap, "
    "make_timestamp(2024, 11, 3, 1, minute(ts), 0.5) AS twice, "
    "make_timestamp(year(d), month(d), day(d), 0, 0, 60) AS next_minute, "
    "try_to_timestamp(s, 'yyyy-MM-dd HH:mm:ss') AS parsed, to_timestamp_ntz(s, 'yyyy-MM-dd HH:mm:ss') AS wall, "
    "make_timestamp_ntz(2024, 3, 10, 2, minute(ts), 0) AS wall_gap, to_date(s, 'yyyy-MM-dd HH:mm:ss') AS parsed_day, "
    "unix_timestamp(s) AS ut FROM ev "
    "WHERE length(s) = 19",
    # a wall clock of no zone: read as itself, and in the session's zone where it meets an instant
    "wall_clock": "SELECT id, n, CAST(n AS TIMESTAMP) AS nl, CAST(ts AS TIMESTAMP_NTZ) AS tn, n < ts AS before, "
    "coalesce(n, ts) AS c, coalesce(n, d) AS cd, hour(n) AS h, date_trunc('HOUR', n) AS th, "
    "date_format(n, 'yyyy-MM-dd HH:mm') AS f, unix_timestamp(n) AS ut, n + INTERVAL 1 DAY AS d1, "
    "n + INTERVAL 2 HOURS AS h2, CAST(n AS DATE) AS nd, CAST(n AS STRING) AS ns, CAST(s AS TIMESTAMP_NTZ) AS sn, "
    "n = TIMESTAMP '2024-03-10 03:30:00' AS at_lit, n IN (TIMESTAMP '2024-03-10 03:30:00') AS in1, "
    "n IN (TIMESTAMP '2024-03-10 03:30:00', TIMESTAMP '2024-11-03 01:30:00') AS in2, "
    "n BETWEEN TIMESTAMP '2024-03-10 03:00:00' AND TIMESTAMP '2024-03-10 04:00:00' AS btw, "
    "CAST(ts AS TIMESTAMP_NTZ) >= TIMESTAMP_NTZ '2024-11-03 01:30:00' AS ge_wall, "
    "CAST(ts AS TIMESTAMP_NTZ) = TIMESTAMP_NTZ '2024-11-03 01:30:00' AS eq_wall, to_timestamp_ntz(s) AS ts_s, "
    "to_timestamp_ntz(ts) AS ts_ts, to_timestamp_ntz(d) AS ts_d FROM ev",
}


def _rows(rng: random.Random, ids: Iterator[int], n: int) -> list[tuple[Any, ...]]:
    """Timestamps (as UTC instants) around the 2024 clock changes of Los Angeles and
    elsewhere in the year, each with a date, a string of a local time and a wall clock of
    no zone (TIMESTAMP_NTZ) in or near a skipped or repeated hour."""
    anchors = [
        dt.datetime(2024, 3, 10, 9, 0),  # 01:00 PST, the hour before the skipped one
        dt.datetime(2024, 11, 3, 7, 0),  # 00:00 PDT, before the repeated hour
        dt.datetime(2024, 1, 31, 7, 30),  # late in a month, near midnight locally
        dt.datetime(2024, 6, 30, 18, 45),
        dt.datetime(2023, 12, 31, 23, 15),
    ]
    out = []
    for _ in range(n):
        ts = rng.choice(anchors) + dt.timedelta(minutes=15 * rng.randrange(-12, 16))
        local = rng.choice(["2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-07-01 00:00:00", "2024-03-10"])
        d = rng.choice([dt.date(2024, 3, 10), dt.date(2024, 11, 3), dt.date(2024, 1, 31), None])
        n = dt.datetime.fromisoformat(rng.choice(["2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-03-10"]))
        n += dt.timedelta(minutes=20 * rng.randrange(-4, 5))
        out.append((next(ids), None if rng.random() < 0.05 else ts.replace(tzinfo=dt.UTC), d, local, n))
    return out


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "+02:00"])
def test_views_compute_in_the_session_time_zone(spark: Any, tmp_path: Path, zone: str) -> None:
    name = f"tz{next(_names)}"
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    rng = random.Random(7)
    ids = itertools.count()
    schema = "id INT, ts TIMESTAMP, d DATE, s STRING, n TIMESTAMP_NTZ"
    try:
        spark.sql(f"CREATE TABLE {name}_ev ({schema}) USING parquet LOCATION '{tmp_path / 'ev'}'")
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
        job.plain_table("ev", source=f"{name}_ev")
        for view, query in VIEWS.items():
            job.view(f"CREATE VIEW {view} AS {query}")
        live: list[tuple[Any, ...]] = []
        for _ in range(3):
            if live:
                rng.shuffle(live)
                live = live[len(live) // 3 :]
            live += _rows(rng, ids, 40)
            spark.createDataFrame(live, schema).write.mode("overwrite").insertInto(f"{name}_ev", overwrite=True)
            job.refresh()
            for view, query in VIEWS.items():
                want = spark.sql(query.replace(" FROM ev", f" FROM {name}_ev"))
                assert spark_rows(job.table(view)) == spark_rows(want), f"{view} in {zone}"
        job.close()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        spark.sql(f"DROP TABLE IF EXISTS {name}_ev")


def test_a_session_with_ansi_off_is_refused(spark: Any, tmp_path: Path) -> None:
    """Spark without ANSI mode answers NULL where dbspc raises: such a session is refused
    when the job is built (at the first view), with what to change."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    try:
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out")
        job.plain_table("ev", source="range_not_read")
        with pytest.raises(UsageError, match=r"spark.sql.ansi.enabled=false.*Set it to true"):
            job.view("CREATE VIEW v AS SELECT id FROM ev")  # checked as the view is registered
            job.refresh()
        assert not (tmp_path / "ckpt").exists() or not any((tmp_path / "ckpt").iterdir())
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_the_session_recursion_limit_bounds_a_recursive_view(spark: Any, tmp_path: Path) -> None:
    """Without max_iterations, a recursive view may go as deep as the session's
    spark.sql.cteRecursionLevelLimit lets Spark go."""
    name = f"rec{next(_names)}"
    before = spark.conf.get("spark.sql.cteRecursionLevelLimit", "100")
    spark.sql(f"CREATE TABLE {name}_n (x INT) USING parquet LOCATION '{tmp_path / 'n'}'")
    spark.sql(f"INSERT INTO {name}_n VALUES (0)")
    view = (
        "CREATE VIEW chain AS WITH RECURSIVE r(x) AS (SELECT x FROM n UNION ALL SELECT x + 1 FROM r WHERE x < 12) "
        "SELECT x FROM r"
    )
    try:
        for limit, deep_enough in (("5", False), ("50", True)):
            spark.conf.set("spark.sql.cteRecursionLevelLimit", limit)
            job = SparkPipeline(spark, tmp_path / f"ckpt{limit}", output=tmp_path / f"out{limit}")
            job.plain_table("n", source=f"{name}_n")
            job.view(view)
            assert job.job.max_iterations == int(limit)
            if deep_enough:
                job.refresh()
                assert sorted(r[0] for r in job.table("chain").collect()) == list(range(13))
            else:
                with pytest.raises(RuntimeSqlError, match="recursive CTE 'r'"):
                    job.refresh()
            job.close()
    finally:
        spark.conf.set("spark.sql.cteRecursionLevelLimit", before)
        spark.sql(f"DROP TABLE IF EXISTS {name}_n")


def test_aliases_keep_their_case_in_the_output_tables(spark: Any, tmp_path: Path) -> None:
    """Spark keeps an alias's case (`AS TotalAmount`) and a view column list's; so do the
    output tables. Other names are dbspc's lower-case ones."""
    name = f"case{next(_names)}"
    spark.sql(f"CREATE TABLE {name}_o (region STRING, amount INT) USING parquet LOCATION '{tmp_path / 'o'}'")
    spark.sql(f"INSERT INTO {name}_o VALUES ('eu', 1), ('eu', 2), ('us', 5)")
    try:
        job = SparkPipeline(spark, tmp_path / "ckpt", output=tmp_path / "out", view_prefix=f"{name}_")
        job.plain_table("o", source=f"{name}_o")
        query = "SELECT region, SUM(amount) AS TotalAmount, COUNT(*) AS `Order Count` FROM o GROUP BY region"
        job.view(f"CREATE VIEW totals AS {query}")
        job.view("CREATE VIEW listed (Region, Total) AS SELECT region, SUM(amount) FROM o GROUP BY region")
        job.refresh()
        want = spark.sql(query.replace("FROM o", f"FROM {name}_o"))
        assert job.table("totals").columns == want.columns == ["region", "TotalAmount", "Order Count"]
        assert spark_rows(job.table("totals")) == spark_rows(want)
        assert job.table("listed").columns == ["Region", "Total"]
        job.close()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}_o")

-- title: date and time functions (parts, day of year, ISO week, epoch seconds) and interval arithmetic, typed and evaluated as Spark 4
-- oracle: spark (DuckDB's date_trunc of a DATE is a DATE and its dayofweek starts at 0)
CREATE TABLE t (d DATE, ts TIMESTAMP, n INT);
CREATE VIEW parts AS SELECT d, year(d) AS y, month(d) AS m, day(d) AS dd, quarter(d) AS q, dayofweek(d) AS dw,
  hour(ts) AS h, minute(ts) AS mi, second(ts) AS se, extract(year FROM ts) AS ey, extract(month FROM d) AS em FROM t;
CREATE VIEW arith AS SELECT d, date_add(d, n) AS da, date_sub(d, 1) AS ds, datediff(d, DATE '2020-01-01') AS df,
  add_months(d, n) AS am, last_day(d) AS ld, d + 1 AS p1, d - n AS mn FROM t;
CREATE VIEW truncs AS SELECT ts, date_trunc('MONTH', ts) AS tm, date_trunc('WEEK', d) AS tw, date_trunc('QUARTER', ts) AS tq,
  date_trunc('HOUR', ts) AS th, trunc(d, 'YEAR') AS ty, trunc(d, 'MM') AS tmm, trunc(d, 'DD') AS tdd FROM t;
CREATE VIEW intervals AS SELECT d, d + INTERVAL 3 DAY AS pi, ts - INTERVAL 90 MINUTES AS tmi, d + INTERVAL 1 MONTH AS pm,
  d - INTERVAL 1 YEAR AS my, d + INTERVAL 2 HOURS AS ph, ts + INTERVAL 1 MONTH AS tpm FROM t;
CREATE VIEW months_cast AS SELECT d, add_months(d, CAST(n AS BIGINT) * 2) AS am2, add_months(d, n / 4) AS aq,
  add_months(d, CAST(n AS STRING)) AS astr FROM t;
CREATE VIEW days_seconds AS SELECT d, dayofyear(d) AS doy, weekofyear(d) AS woy, unix_seconds(ts) AS us,
  unix_timestamp(ts) AS ut, to_unix_timestamp(d) AS utd, dayofyear(ts) AS doyt, weekofyear(DATE '2021-01-03') AS w53,
  timestamp_seconds(CAST(n AS BIGINT) * 86400) AS tsec, from_unixtime(CAST(n AS BIGINT) * 3600 + 59) AS fu FROM t;
CREATE VIEW by_month AS SELECT date_trunc('MONTH', d) AS month, count(*) AS n FROM t WHERE year(d) >= 2020 GROUP BY date_trunc('MONTH', d);
-- step
INSERT INTO t VALUES (DATE '2020-01-31', TIMESTAMP '2020-05-19 10:11:12', 1), (DATE '2020-02-16', TIMESTAMP '2020-02-29 23:59:58', 2);
INSERT INTO t VALUES (NULL, NULL, NULL), (DATE '2019-12-31', TIMESTAMP '2019-12-31 00:00:00', -1), (DATE '2020-02-29', TIMESTAMP '2020-03-01 12:30:45.5', 12);
-- step
DELETE FROM t WHERE n = 2;
INSERT INTO t VALUES (DATE '2020-01-05', TIMESTAMP '2020-01-05 05:05:05', 0);

-- title: make_date, date_format, months_between, next_day, weekday, dayname, date_part and epoch conversions, as Spark 4 computes them
-- oracle: spark (DuckDB has no date_format with Spark's patterns, months_between or next_day)
CREATE TABLE t (id INT, d DATE, ts TIMESTAMP, y INT, m INT, dd INT, n BIGINT, s STRING);
CREATE VIEW made AS SELECT id, CASE WHEN y BETWEEN 1 AND 9999 THEN make_date(y, m, dd) END AS md,
  date_format(make_date(y, m, dd), 'y yy yyy yyyy') AS years, unix_date(make_date(y, m, dd)) AS days,
  CASE WHEN y > 0 AND y < 10000 THEN make_date(CAST(y AS BIGINT), CAST(m AS STRING), CAST(dd AS DOUBLE) + 0.5) END AS cast_args,
  date_format(make_date(y, m, dd), 'yyyy-MM-dd E D') AS ymd FROM t;
CREATE VIEW formats AS SELECT id, date_format(ts, 'yyyy-MM-dd''T''HH:mm:ss.SSSSSS') AS iso,
  date_format(ts, 'y yy yyy yyyy M MM MMM MMMM d dd D DD DDD') AS dates,
  date_format(ts, 'H HH h hh a m mm s ss S SS SSS') AS times, date_format(ts, 'E EE EEE EEEE') AS days,
  date_format(d, 'dd/MM/yyyy HH:mm a') AS of_date, date_format(s, 'yyyy.MM.dd, hh a') AS of_string,
  date_format(ts, 'yyyy''''MM ''at'' HH'':''mm é') AS quoted, date_format(d, '') AS empty FROM t;
CREATE VIEW months AS SELECT id, months_between(ts, d) AS mb, months_between(d, ts, false) AS mbf,
  months_between(ts, TIMESTAMP '2020-02-15 10:30:00') AS to_const, months_between(s, d) AS of_string,
  months_between(d, DATE '2000-02-29', true) AS leap FROM t;
CREATE VIEW weekdays AS SELECT id, next_day(d, 'MO') AS mo, next_day(d, 'tue') AS tu, next_day(ts, 'Sunday') AS su,
  next_day(s, 'SAT') AS sa, weekday(d) AS wd, weekday(ts) AS wdt, dayname(d) AS dn, monthname(ts) AS mn,
  date_part('year', d) AS py, date_part('MONTH', ts) AS pm, date_part('doy', d) AS pdoy, date_part('week', d) AS pw,
  date_part('dow', ts) AS pdow, datepart('hour', ts) AS ph, date_part('d', s) AS pd, extract(doy FROM ts) AS edoy FROM t;
CREATE VIEW epochs AS SELECT id, unix_date(d) AS ud, date_from_unix_date(y) AS fy, date_from_unix_date(CAST(-dd AS STRING)) AS fs,
  unix_millis(ts) AS um, unix_micros(ts) AS uu, timestamp_millis(n) AS tm, timestamp_micros(n * 1000) AS tu,
  timestamp_millis(y) AS tmy, unix_timestamp(timestamp_millis(n)) AS utm, unix_seconds(timestamp_millis(n)) AS usm,
  CASE WHEN length(s) = 19 THEN unix_timestamp(s) END AS uts, CASE WHEN length(s) = 10 THEN to_unix_timestamp(s, 'yyyy-MM-dd') END AS utd,
  unix_timestamp('1969-12-31 23:59:59.5', 'yyyy-MM-dd HH:mm:ss.S') AS half FROM t;
CREATE VIEW stamps AS SELECT id, make_timestamp(CASE WHEN y BETWEEN 1 AND 9999 THEN y END, m, dd, 23, 59, 59.999999) AS last_micro,
  make_timestamp(2020, m, dd, 23, 59, 60) AS sixty, make_timestamp(2021, 1, 1, 0, 0, CAST(dd AS DOUBLE) + 0.1234567) AS rounded,
  make_timestamp(2021, m, 1, dd % 24, 0, CAST(dd AS STRING)) AS from_string, date_format(make_timestamp(y, m, dd, 12, 0, 0), 'yyyy-MM-dd HH') AS far FROM t;
CREATE VIEW parsed AS SELECT id, CASE WHEN length(s) = 10 THEN to_date(s, 'yyyy-MM-dd') END AS day,
  try_to_timestamp(s, 'yyyy-MM-dd HH:mm:ss') AS whole, try_to_timestamp(s, 'yyyy-MM-dd HH:mm:ss.SSSS') AS fraction,
  try_to_date(s, 'y-M-d') AS short, try_to_date(date_format(d, 'yyyyMMdd'), 'yyyyMMdd') AS packed,
  to_timestamp(date_format(ts, 'dd MMMM yy hh:mm a'), 'dd MMMM yy hh:mm a') AS round_trip,
  to_date(date_format(d, 'MMM d, yyyy'), 'MMM d, yyyy') AS named, try_to_date(s, 'yyyy-MM-dd''T''') AS none,
  unix_date(to_date('-0005-01-05', 'yyyy-MM-dd')) AS minus_year, unix_date(to_date('+12020-1-5', 'yyyy-M-d')) AS plus_year,
  unix_date(try_to_date('+2020-01-05', 'yyyy-MM-dd')) AS plus_4, unix_date(to_date('-5-01-05', 'y-MM-dd')) AS y_minus FROM t;
CREATE VIEW by_weekday AS SELECT dayname(d) AS day, count(*) AS n, max(date_format(ts, 'MMM')) AS latest FROM t GROUP BY dayname(d);
-- step
INSERT INTO t VALUES
  (1, DATE '2020-02-29', TIMESTAMP '2020-03-31 13:04:05.123456', 2020, 2, 29, 1589018400123, '2020-01-31 23:59:59'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, DATE '0012-01-05', TIMESTAMP '0999-12-31 00:00:00', 12, 1, 5, -1, '0999-03-15'),
  (4, DATE '2019-02-28', TIMESTAMP '2019-03-28 23:59:59.999999', 12345, 12, 31, -62135596800000, '2019-02-28 12:00:00'),
  (5, DATE '2024-12-31', TIMESTAMP '2024-01-31 00:00:00.5', -5, 3, 1, 0, '2024-02-29');
-- step
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES
  (6, DATE '2000-01-01', TIMESTAMP '1970-01-01 00:00:00', 0, 2, 29, 253402300799999, '1969-12-31 23:59:59.9995'),
  (7, DATE '2021-03-31', TIMESTAMP '2021-02-28 12:00:00', 9999, 12, 31, -1000, '2021-03-31 06:00:00');
-- step
DELETE FROM t WHERE id IN (2, 4);
INSERT INTO t VALUES (8, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59.999', 100, 6, 30, 86400000, '1999-11-30');

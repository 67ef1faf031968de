-- title: TIMESTAMP_NTZ, a wall clock of no zone, beside TIMESTAMP, DATE and STRING, as Spark types and casts it
-- oracle: spark (an instant beside a wall clock is the instant; CAST to a number is refused, unix_timestamp reads it as UTC)
CREATE TABLE t (id INT, n TIMESTAMP_NTZ, l TIMESTAMP, d DATE, s STRING, PRIMARY KEY (id));
CREATE VIEW casts AS SELECT id, n, CAST(n AS STRING) AS ns, CAST(n AS DATE) AS nd, CAST(n AS TIMESTAMP) AS nl,
  CAST(l AS TIMESTAMP_NTZ) AS ln, CAST(d AS TIMESTAMP_NTZ) AS dn, TRY_CAST(s AS TIMESTAMP_NTZ) AS sn FROM t;
CREATE VIEW mixed AS SELECT id, n < l AS before_l, coalesce(n, l) AS nl, coalesce(n, d) AS nd, n > d AS after_d,
  n = TIMESTAMP_NTZ '2024-03-10 02:30:00' AS lit, greatest(n, d) AS g, n IN (TIMESTAMP '2024-03-10 02:30:00') AS inl
FROM t;
CREATE VIEW parts AS SELECT id, year(n) AS y, month(n) AS m, day(n) AS dd, hour(n) AS h, minute(n) AS mi, second(n) AS se,
  EXTRACT(HOUR FROM n) AS eh, weekday(n) AS wd, date_trunc('HOUR', n) AS th, date_trunc('MONTH', n) AS tm,
  date_format(n, 'yyyy-MM-dd HH:mm') AS f, unix_timestamp(n) AS ut, datediff(n, d) AS ddiff, to_date(n) AS td,
  last_day(n) AS ld, make_timestamp_ntz(2024, 3, 10, 2, minute(n), 0.5) AS mk, to_timestamp_ntz(l) AS tl,
  to_timestamp_ntz(d) AS tdd FROM t;
CREATE VIEW moved AS SELECT id, n + INTERVAL 1 DAY AS d1, n + INTERVAL 3 HOURS AS h3, n - INTERVAL 1 MONTH AS mo,
  n + INTERVAL 90 MINUTES AS m90, date_add(n, 1) AS da FROM t;
CREATE VIEW per_hour AS SELECT hour(n) AS h, COUNT(*) AS c, MIN(n) AS first_n, MAX(n) AS last_n FROM t GROUP BY hour(n);
CREATE VIEW instant_numbers AS SELECT id, CAST(l AS BIGINT) AS secs, CAST(l AS DOUBLE) AS exact, CAST(l AS FLOAT) AS f,
  CAST(l AS DECIMAL(20, 6)) AS dec6, CAST(l AS DECIMAL(12, 0)) AS dec0, TRY_CAST(l AS SMALLINT) AS small FROM t;
CREATE VIEW joined AS SELECT a.id AS a, b.id AS b FROM t a JOIN t b ON a.n = b.n AND a.id < b.id;
-- step
INSERT INTO t VALUES
  (1, TIMESTAMP_NTZ '2024-03-10 02:30:00', TIMESTAMP '2024-03-10 10:30:00', DATE '2024-03-10', '2024-03-10 02:30:00'),
  (2, TIMESTAMP_NTZ '2024-11-03 01:30:00.25', TIMESTAMP '2024-11-03 01:30:00', DATE '2024-11-02', '2024-11-03'),
  (3, TIMESTAMP_NTZ '1969-12-31 23:59:59.5', NULL, DATE '1970-01-01', 'not a time'),
  (4, NULL, TIMESTAMP '1969-12-31 23:59:58.5', NULL, NULL),
  (5, TIMESTAMP_NTZ '2024-03-10 02:30:00', TIMESTAMP '2024-03-10 02:30:00', DATE '2024-03-11', '2024-03-10T02:30');
-- step
DELETE FROM t WHERE id IN (1, 3);
INSERT INTO t VALUES (6, TIMESTAMP_NTZ '2024-02-29 23:59:59.999999', TIMESTAMP '2024-02-29 23:59:59.123456', DATE '2024-02-29', ' 2024-02-29 ');

-- title: typeof(x) is the argument's type as Spark's catalog string, a constant that evaluates nothing; equal_null(a, b) is a <=> b
-- oracle: spark (DuckDB's typeof names its own types: INTEGER, VARCHAR)
CREATE TABLE t (id INT, x INT, b BIGINT, k TINYINT, d DECIMAL(10, 2), f DOUBLE, r FLOAT, s STRING, v VARCHAR(5), c CHAR(3), dt DATE, ts TIMESTAMP, nt TIMESTAMP_NTZ, flag BOOLEAN);
CREATE VIEW types AS SELECT id, typeof(x) AS tx, typeof(b) AS tb, typeof(k) AS tk, typeof(d) AS td, typeof(d * 2) AS td2,
  typeof(f) AS tf, typeof(r) AS tr, typeof(s) AS ts_, typeof(v) AS tv, typeof(c) AS tc, typeof(dt) AS tdt, typeof(ts) AS tts,
  typeof(nt) AS tnt, typeof(flag) AS tflag, typeof(NULL) AS tnull, typeof(split(s, ',')) AS tarr, typeof(x / 0) AS tdiv,
  typeof(x + b) AS tsum FROM t;
CREATE VIEW same AS SELECT id, equal_null(x, k) AS e1, equal_null(s, v) AS e2, equal_null(x, NULL) AS e3 FROM t;
-- step
INSERT INTO t VALUES (1, 5, 5, 5, 1.50, 2.5, 2.5, 'a,b', 'a,b', 'abc', DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00', TIMESTAMP_NTZ '2024-01-01 10:00:00', true),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (3, 1, 2, 3, 0.00, 0.0, 0.0, 'x', 'y', 'z', NULL, NULL, NULL, false);
-- step
DELETE FROM t WHERE id = 1;

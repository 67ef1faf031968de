-- title: Spark compares before IN / BETWEEN / LIKE: k = v IN (true) is (k = v) IN (true)
-- oracle: spark (sqlglot parses k = (v IN (true)), and DuckDB runs what sqlglot parsed)
CREATE TABLE t (k INT, v INT, b BOOLEAN, c BOOLEAN);
CREATE VIEW p AS
  SELECT k, v,
         k = v IN (true) AS eq_in,
         k < v BETWEEN false AND true AS lt_between,
         k <> v IN (false, NULL) AS ne_in,
         b <=> (c IN (false)) AS nse_paren
  FROM t;
CREATE VIEW w AS SELECT k, v FROM t WHERE k >= v IN (true);
-- step
INSERT INTO t VALUES (1, 1, true, true), (1, 2, NULL, NULL), (3, 2, true, false), (NULL, 2, NULL, true);
-- step
DELETE FROM t WHERE k = 1 AND v = 1;
INSERT INTO t VALUES (2, 2, false, NULL);

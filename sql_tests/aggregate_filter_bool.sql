-- title: aggregate FILTER (WHERE ...), count_if, bool_and / bool_or / every / some, on empty groups too
-- oracle: spark (DuckDB has no SOME aggregate)
CREATE TABLE t (g INT, x INT, b BOOLEAN);
CREATE VIEW f AS SELECT count_if(x > 6) AS ci, bool_and(b) AS ba, bool_or(b) AS bo, every(b) AS ev, some(b) AS so,
  sum(x) FILTER (WHERE b) AS sf, count(*) FILTER (WHERE b) AS cf, count(DISTINCT x) FILTER (WHERE g = 1) AS cdf FROM t;
CREATE VIEW per_g AS SELECT g, count_if(b) AS n_true, bool_and(x > 0) AS all_pos, max(x) FILTER (WHERE NOT b) AS mx
  FROM t GROUP BY g HAVING count(*) FILTER (WHERE x IS NOT NULL) > 0;
-- step
INSERT INTO t VALUES (1, 10, true), (1, null, false), (2, 5, null), (null, 7, true), (1, 10, true);
-- step
DELETE FROM t WHERE x = 10;
INSERT INTO t VALUES (2, -1, false);
-- step
DELETE FROM t WHERE g = 2 OR g IS NULL;
-- step
DELETE FROM t WHERE g = 1;

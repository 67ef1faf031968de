-- title: ROLLUP, CUBE, GROUPING SETS with GROUPING() and grouping_id(): one aggregate per set, keys outside a set NULL
-- oracle: spark (DuckDB returns a grand-total row for ROLLUP on empty input; Spark returns none)
CREATE TABLE t (a INT, x INT, b BOOLEAN);
CREATE VIEW r AS SELECT a, count(*) AS n, sum(x) AS s, grouping(a) AS ga, grouping_id() AS gid FROM t GROUP BY ROLLUP(a);
CREATE VIEW c AS SELECT a, b, count(*) AS n, grouping_id(a, b) AS g FROM t GROUP BY CUBE(a, b);
CREATE VIEW gs AS SELECT a, count(*) AS n FROM t GROUP BY GROUPING SETS ((a), (a), ());
CREATE VIEW h AS SELECT a, x, count(*) AS n FROM t GROUP BY a, ROLLUP(x) HAVING grouping(x) = 1 OR a = 1;
-- step
INSERT INTO t VALUES (1, 10, true), (1, null, false), (2, 5, null), (null, 7, true);
-- step
DELETE FROM t WHERE a = 2;
INSERT INTO t VALUES (1, 10, false), (3, 1, true);
-- step
DELETE FROM t WHERE a IS NULL OR a = 1;
-- step
DELETE FROM t WHERE a = 3;

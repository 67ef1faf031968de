-- title: positions inside ROLLUP, CUBE and GROUPING SETS name SELECT items, as at the top of GROUP BY (Spark)
CREATE TABLE t (a INT, x INT, s STRING);
CREATE VIEW r AS SELECT a, s, count(*) AS n, sum(x) AS sx FROM t GROUP BY ROLLUP(1, 2);
CREATE VIEW c AS SELECT a % 2 AS odd, s, count(*) AS n FROM t GROUP BY CUBE(1, s);
CREATE VIEW g AS SELECT a, upper(s) AS u, max(x) AS mx FROM t GROUP BY GROUPING SETS ((1), (2), (1, 2));
-- step
INSERT INTO t VALUES (1, 10, 'a'), (1, 5, 'b'), (2, 7, 'a'), (3, NULL, NULL);
-- step
DELETE FROM t WHERE a = 1 AND s = 'a';
INSERT INTO t VALUES (2, 1, 'b');
-- step
DELETE FROM t WHERE a >= 2;

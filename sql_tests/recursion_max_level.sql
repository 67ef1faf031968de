-- title: MAX RECURSION LEVEL n (Spark 4.1+) lets levels 0..n-1 of a recursive CTE produce rows
-- oracle: spark (DuckDB has no MAX RECURSION LEVEL)
CREATE TABLE s (n INT, stop INT);
CREATE VIEW v AS WITH RECURSIVE r(n, stop) MAX RECURSION LEVEL 4 AS (
  SELECT n, stop FROM s UNION ALL SELECT n + 1, stop FROM r WHERE n < stop
) SELECT n, count(*) AS c FROM r GROUP BY n;
-- step
INSERT INTO s VALUES (1, 4), (2, 3);
-- step
INSERT INTO s VALUES (10, 13);
-- step
DELETE FROM s WHERE n = 1;

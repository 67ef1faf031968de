-- title: percentile(x, p) and median(x), Spark's exact interpolated percentile of each group (DISTINCT too), maintained from the group's value multiset
-- oracle: spark (DuckDB has no percentile(x, p); its quantile is another function)
CREATE TABLE t (id INT, g INT, x DOUBLE, n INT, m DECIMAL(10, 2));
CREATE VIEW pct AS SELECT g, median(x) AS md, percentile(x, 0.25) AS p25, percentile(n, 0.9) AS p90, percentile(m, 0) AS p0,
  percentile(m, 1) AS p1, percentile(DISTINCT n, 0.5) AS pdn, median(n) AS mn, COUNT(*) AS c FROM t GROUP BY g;
CREATE VIEW total AS SELECT percentile(x, 0.333) AS p, median(m) AS mm FROM t;
-- step
INSERT INTO t VALUES (1, 1, 1.5, 1, 1.00), (2, 1, 2.5, 2, 2.50), (3, 1, NULL, 2, NULL), (4, 1, 10.0, 7, -3.25),
  (5, 2, 0.1, 5, 0.10), (6, 2, 0.2, 5, 0.20), (7, 3, CAST('NaN' AS DOUBLE), 3, 9.99), (8, 3, 1.0, 4, 1.01), (9, 4, NULL, NULL, NULL),
  (10, 1, 2.5, 2, 2.50), (11, 2, -1e300, 100, 5.55);
-- step
DELETE FROM t WHERE id IN (2, 6);
INSERT INTO t VALUES (12, 3, 7.0, 3, 0.07), (13, 5, 4.0, 4, 4.00);
-- step
DELETE FROM t WHERE g = 1;

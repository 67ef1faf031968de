-- title: stddev and variance (sample and population) per group, NULL for too few values, under deletes
CREATE TABLE t (g INT, x INT, d DECIMAL(8,2), f DOUBLE);
CREATE VIEW per_g AS SELECT g, stddev(x) AS sx, stddev_pop(x) AS spx, variance(d) AS vd, var_pop(d) AS vpd,
  var_samp(f) AS vf, stddev_samp(f) AS sf, count(x) AS n FROM t GROUP BY g;
CREATE VIEW overall AS SELECT variance(x) AS vx, stddev(DISTINCT x) AS sdx FROM t;
-- step
INSERT INTO t VALUES (1, 1, 1.50, 0.5), (1, 2, 2.25, 1.5), (1, 3, 3.00, 2.5), (1, 4, NULL, NULL), (2, 10, 5.00, 1e10), (3, NULL, NULL, NULL), (1, 4, 9.99, -3.25);
-- step
DELETE FROM t WHERE g = 1 AND x = 4;
INSERT INTO t VALUES (2, 20, 6.00, 1e10 + 1), (2, 30, 7.00, 1e10 + 2);
-- step
DELETE FROM t WHERE g = 2 AND x = 10;
-- step
DELETE FROM t WHERE g = 2;

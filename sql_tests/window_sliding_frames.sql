-- title: MIN/MAX over bounded ROWS frames, and FLOAT/DOUBLE SUM/AVG over them added afresh per row as Spark adds a sliding frame
-- oracle: spark (DuckDB refuses the empty frame CURRENT ROW AND 1 PRECEDING, and sums a sliding frame in another order)
CREATE TABLE t (id INT, g INT, x DOUBLE, n BIGINT, s STRING, f FLOAT);
CREATE VIEW slide AS SELECT id, g,
  MAX(n) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS mx,
  MIN(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS mnp,
  MIN(s) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING) AS mns,
  MAX(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 4 FOLLOWING) AS mxf,
  MAX(n) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) AS empty,
  SUM(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS sx,
  AVG(x) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS ax,
  SUM(f) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) AS sf,
  AVG(f) OVER (PARTITION BY g ORDER BY id DESC ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS af FROM t;
-- step
INSERT INTO t VALUES (1, 1, 0.1, 5, 'q', 0.1), (2, 1, 0.2, 9, 'b', 1e30), (3, 1, NULL, NULL, NULL, NULL), (4, 1, 0.3, 2, 'z', -1e30),
  (5, 1, 1e16, 7, 'a', 3.3), (6, 1, -0.0, 1, 'm', -0.0), (7, 2, -0.0, 3, 'x', 2.5), (8, 2, 1.0, 8, 'y', NULL), (9, 3, CAST('NaN' AS DOUBLE), 4, 'c', 1.0),
  (10, 1, -1e16, 6, 'k', 0.7), (11, 3, 2.0, 0, 'd', 2.0);
-- step
DELETE FROM t WHERE id IN (2, 8);
INSERT INTO t VALUES (12, 2, 5.5, 10, 'e', 5.5), (13, 1, 0.7, 11, NULL, 0.7);
-- step
DELETE FROM t WHERE id = 4;
-- step
INSERT INTO t VALUES (14, 4, 0.0, 1, 'p', 0.0), (15, 4, 0.0, 1, 'p', 0.0), (16, 5, -0.0, 1, 'p', -0.0), (17, 4, NULL, NULL, NULL, NULL);

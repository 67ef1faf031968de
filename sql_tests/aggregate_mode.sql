-- title: mode(x, true) and mode() WITHIN GROUP (ORDER BY x [DESC]): each group's most frequent value, the lowest (highest) of those that tie, maintained from the group's value multiset as deletes change which value leads
-- oracle: spark (DuckDB's mode breaks ties its own way)
CREATE TABLE t (id INT, g INT, x INT, s STRING, d DECIMAL(6, 2), f DOUBLE, b BOOLEAN);
CREATE VIEW modes AS SELECT g, mode(x, true) AS mx, mode() WITHIN GROUP (ORDER BY x DESC) AS mx_hi,
  mode() WITHIN GROUP (ORDER BY s) AS ms, mode(d, TRUE) AS md, mode(f, true) AS mf, mode(b, true) AS mb,
  mode(x, true) FILTER (WHERE x > 1) AS mx_big, COUNT(*) AS c FROM t GROUP BY g;
CREATE VIEW total AS SELECT mode(x, true) AS mx, mode() WITHIN GROUP (ORDER BY s DESC) AS ms FROM t;
-- step
INSERT INTO t VALUES (1, 1, 3, 'b', 1.50, 0.0, true), (2, 1, 1, 'a', 1.50, -0.0, false), (3, 1, 3, 'b', 2.25, -0.0, true),
  (4, 1, 1, 'a', NULL, 1.0, NULL), (5, 1, 2, 'B', 2.25, 1.0, false), (6, 2, NULL, NULL, NULL, NULL, NULL),
  (7, 3, 5, 'z', -1.00, CAST('NaN' AS DOUBLE), true), (8, 3, 5, 'é', -1.00, CAST('NaN' AS DOUBLE), true),
  (9, 3, 4, 'e', 3.00, 2.5, false);
-- step
DELETE FROM t WHERE id IN (1, 7);
INSERT INTO t VALUES (10, 2, 9, 'q', 0.01, 3.0, true), (11, 3, 4, 'e', 3.00, 2.5, false), (12, 4, 6, 'm', 6.00, 6.0, true);
-- step
DELETE FROM t WHERE g = 1 AND x = 1;
INSERT INTO t VALUES (13, 1, 2, 'B', 2.25, 1.0, false);
-- step
DELETE FROM t WHERE g IN (2, 3);

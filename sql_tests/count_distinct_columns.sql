-- title: COUNT(DISTINCT a, b) counts distinct tuples whose members are all non-NULL, global and grouped
CREATE TABLE t (g INT, a INT, b STRING, d DECIMAL(4,1));
CREATE VIEW pairs AS SELECT g, COUNT(DISTINCT a, b) AS n, COUNT(DISTINCT b, d) AS m, count(*) AS c FROM t GROUP BY g;
CREATE VIEW everything AS SELECT COUNT(DISTINCT a, b, d) AS n FROM t;
-- step
INSERT INTO t VALUES (1, 1, 'x', 1.0), (1, 1, 'x', 2.0), (1, 2, 'x', 1.0), (1, NULL, 'x', 1.0), (1, 1, NULL, NULL),
  (2, 12, '3', 1.5), (2, 1, '23', 1.5), (2, 12, '3', NULL);
-- step
DELETE FROM t WHERE g = 1 AND d = 2.0;
INSERT INTO t VALUES (2, 1, ':', 0.0), (2, 1, ':', 0.0);
-- step
DELETE FROM t WHERE g = 2;

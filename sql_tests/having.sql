-- title: HAVING on aggregates, groups entering and leaving the view
CREATE TABLE t (g STRING, x INT);

CREATE VIEW busy AS SELECT g, COUNT(*) AS n FROM t GROUP BY g HAVING COUNT(*) >= 2;
CREATE VIEW rich AS SELECT g FROM t GROUP BY g HAVING SUM(x) > 10 AND MIN(x) > 0;

-- step
INSERT INTO t VALUES ('a', 5), ('a', 6), ('b', 20);
-- step
INSERT INTO t VALUES ('b', 1), ('c', -1), ('c', 50);
-- step
DELETE FROM t WHERE x = 6;
-- step
UPDATE t SET x = 1 WHERE g = 'c' AND x = -1;
-- step
DELETE FROM t WHERE g = 'b';

-- title: MIN and MAX per group, deleting the current minimum and maximum
CREATE TABLE t (g STRING, x INT, s STRING);

CREATE VIEW extremes AS SELECT g, MIN(x) AS lo, MAX(x) AS hi, MIN(s) AS first_s, MAX(s) AS last_s FROM t GROUP BY g;

-- step
INSERT INTO t VALUES ('a', 5, 'm'), ('a', 1, 'z'), ('a', 9, 'a'), ('b', 3, NULL);
-- step
DELETE FROM t WHERE x = 1;
-- step
DELETE FROM t WHERE x = 9;
-- step
INSERT INTO t VALUES ('a', 5, 'b'), ('b', NULL, 'q');
-- step
DELETE FROM t WHERE g = 'a' AND s = 'm';
-- step
DELETE FROM t WHERE g = 'b' AND x = 3;

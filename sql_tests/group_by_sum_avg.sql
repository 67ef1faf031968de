-- title: GROUP BY with SUM and AVG: NULLs ignored, all-NULL groups give NULL
CREATE TABLE t (g STRING, x INT, d DECIMAL(6,2));

CREATE VIEW sums AS SELECT g, SUM(x) AS total, AVG(x) AS mean, SUM(d) AS dsum, AVG(d) AS dmean FROM t GROUP BY g;

-- step
INSERT INTO t VALUES ('a', 1, 1.10), ('a', 2, 2.20), ('b', NULL, NULL);
-- step
INSERT INTO t VALUES ('b', 4, 0.01), ('a', 4, NULL);
-- step
UPDATE t SET x = NULL WHERE g = 'b';
-- step
DELETE FROM t WHERE x = 1;
-- step
DELETE FROM t WHERE g = 'a';

-- title: groups that become empty disappear, and come back when rows return
CREATE TABLE t (g INT, x INT);

CREATE VIEW per_group AS SELECT g, COUNT(*) AS n, SUM(x) AS total, MAX(x) AS hi FROM t GROUP BY g;

-- step
INSERT INTO t VALUES (1, 10), (1, 20), (2, 30);
-- step
DELETE FROM t WHERE g = 1;
-- step
INSERT INTO t VALUES (1, 5);
DELETE FROM t WHERE g = 2;
-- step
UPDATE t SET g = 2;
-- step
DELETE FROM t;

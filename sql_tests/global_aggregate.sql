-- title: global aggregates give one row even on empty input, and after every row is deleted
CREATE TABLE t (x INT, s STRING);
CREATE TABLE other (y INT);

CREATE VIEW g AS SELECT COUNT(*) AS n, COUNT(x) AS nx, SUM(x) AS total, AVG(x) AS mean, MIN(s) AS lo, MAX(x) AS hi FROM t;
CREATE VIEW g_filtered AS SELECT COUNT(*) AS n, SUM(x) AS total FROM t WHERE x > 100;

-- step
INSERT INTO other VALUES (1);
-- step
INSERT INTO t VALUES (1, 'b'), (2, 'a'), (NULL, NULL);
-- step
INSERT INTO t VALUES (200, 'c');
-- step
DELETE FROM t;
-- step
INSERT INTO t VALUES (NULL, NULL);

-- title: non-recursive WITH: several CTEs, one reading another, one read twice
CREATE TABLE t (g STRING, x INT);

CREATE VIEW above_average AS
WITH stats AS (SELECT g, AVG(x) AS mean FROM t GROUP BY g),
     joined AS (SELECT t.g, t.x, stats.mean FROM t JOIN stats ON t.g = stats.g)
SELECT g, x FROM joined WHERE x > mean;

CREATE VIEW twice AS
WITH pos AS (SELECT x FROM t WHERE x > 0)
SELECT a.x AS small, b.x AS large FROM pos a JOIN pos b ON a.x * 2 = b.x;

-- step
INSERT INTO t VALUES ('a', 1), ('a', 2), ('a', 6), ('b', 4);
-- step
INSERT INTO t VALUES ('b', 8), ('b', 3);
-- step
DELETE FROM t WHERE x = 6;
-- step
UPDATE t SET x = 12 WHERE x = 4;

-- title: subqueries inside aggregate arguments (scalar and EXISTS, correlated and not, with FILTER and in HAVING), evaluated per input row before grouping
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);

CREATE VIEW plus_max AS SELECT g, SUM(x + (SELECT MAX(y) FROM u)) AS s FROM t GROUP BY g;
CREATE VIEW counted AS SELECT g, COUNT_IF(EXISTS (SELECT 1 FROM u WHERE u.g = t.g AND u.y > t.x)) AS n, SUM((SELECT COUNT(*) FROM u WHERE u.y < t.x)) FILTER (WHERE x > 1) AS c FROM t GROUP BY g;
CREATE VIEW having_inside AS SELECT g, COUNT(*) AS n FROM t GROUP BY g HAVING MAX((SELECT MIN(y) FROM u WHERE u.g = t.g)) IS NOT NULL OR COUNT(*) > 2;
CREATE VIEW global_inside AS SELECT SUM((SELECT COUNT(*) FROM u WHERE u.g = t.g)) AS s, MAX(NOT EXISTS (SELECT 1 FROM u WHERE u.y = t.x)) AS unmatched FROM t;

-- step
INSERT INTO t VALUES (1, 1), (1, 5), (2, 3), (NULL, 2), (3, NULL), (4, 7), (4, 7), (4, 8);
INSERT INTO u VALUES (1, 4), (2, 1), (2, 7), (NULL, 9);
-- step
DELETE FROM u WHERE g = 2;
INSERT INTO u VALUES (3, 3);
-- step
DELETE FROM t WHERE g = 4;
DELETE FROM u WHERE y = 9;
-- step
DELETE FROM u;

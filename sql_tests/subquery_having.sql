-- title: subqueries in HAVING, uncorrelated and correlated to grouping columns, with outer aggregates inside; groups emptied by deletes, NULL keys, empty subqueries (NULL, COUNT 0)
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);

CREATE VIEW above_avg AS SELECT g, SUM(x) AS s FROM t GROUP BY g HAVING SUM(x) > (SELECT AVG(y) FROM u);
CREATE VIEW outnumber AS SELECT g, COUNT(*) AS n FROM t GROUP BY g HAVING COUNT(*) > (SELECT COUNT(*) FROM u WHERE u.g = t.g);
CREATE VIEW has_smaller AS SELECT g FROM t GROUP BY g HAVING EXISTS (SELECT 1 FROM u WHERE u.y < MAX(t.x));
CREATE VIEW key_in_u AS SELECT g, MIN(x) AS lo FROM t GROUP BY g HAVING g IN (SELECT u.g FROM u WHERE u.y > 0) OR MIN(x) > 100;
CREATE VIEW sum_not_in AS SELECT g FROM t GROUP BY g HAVING SUM(x) NOT IN (SELECT y FROM u WHERE u.g = t.g);
CREATE VIEW max_of_key AS SELECT g, COUNT(x) AS n FROM t GROUP BY g HAVING COUNT(x) >= (SELECT MAX(y) FROM u WHERE u.g = t.g AND u.y < SUM(t.x)) - 1;
CREATE VIEW global_having AS SELECT COUNT(*) AS n FROM t HAVING COUNT(*) > (SELECT COUNT(*) FROM u);

-- step
INSERT INTO t VALUES (1, 1), (1, 5), (2, 3), (NULL, 2), (3, NULL);
INSERT INTO u VALUES (1, 4), (2, 1), (2, 7), (NULL, 9);
-- step
DELETE FROM t WHERE g = 2;
INSERT INTO u VALUES (3, 2);
-- step
INSERT INTO t VALUES (4, 200), (4, 1), (1, 6);
DELETE FROM u WHERE g = 1;
-- step
DELETE FROM u;
-- step
INSERT INTO u VALUES (1, 12), (1, NULL), (4, 201), (NULL, NULL);
DELETE FROM t WHERE g IS NULL;
-- step
DELETE FROM t;

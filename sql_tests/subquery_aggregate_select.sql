-- title: subqueries in the SELECT list of aggregating queries, over the grouped rows: correlated to grouping columns, outer aggregates, ROLLUP, windows, DISTINCT, ORDER BY LIMIT
CREATE TABLE t (g INT, h STRING, x INT);
CREATE TABLE u (g INT, y INT);

CREATE VIEW with_count AS SELECT g, SUM(x) AS s, (SELECT COUNT(*) FROM u WHERE u.g = t.g) AS n FROM t GROUP BY g;
CREATE VIEW with_total AS SELECT g, SUM(x) - (SELECT SUM(y) FROM u) AS d FROM t GROUP BY g;
CREATE VIEW smaller AS SELECT g, h, (SELECT COUNT(*) FROM u WHERE u.y < MAX(t.x) AND u.g = t.g) AS c FROM t GROUP BY g, h;
CREATE VIEW found AS SELECT g, EXISTS (SELECT 1 FROM u WHERE u.g = t.g) AS e, (SELECT MAX(y) FROM u WHERE u.g = t.g) AS m FROM t GROUP BY g;
CREATE VIEW rolled AS SELECT g, h, COUNT(*) AS n, (SELECT COUNT(*) FROM u WHERE u.g = t.g) AS c FROM t GROUP BY ROLLUP (g, h);
CREATE VIEW ranked AS SELECT g, (SELECT MIN(y) FROM u WHERE u.g = t.g) AS m, RANK() OVER (ORDER BY SUM(x) DESC) AS r FROM t GROUP BY g;
CREATE VIEW distinct_counts AS SELECT DISTINCT COUNT(*) AS n, (SELECT COUNT(*) FROM u WHERE u.g = t.g) AS c FROM t GROUP BY g;
CREATE VIEW top2 AS SELECT g, SUM(x) AS s, (SELECT MAX(y) FROM u WHERE u.g = t.g) AS m FROM t GROUP BY g ORDER BY s DESC, g LIMIT 2;
CREATE VIEW global_sub AS SELECT COUNT(*) AS n, (SELECT COUNT(*) FROM u) AS c, (SELECT MAX(y) FROM u WHERE u.y <= MIN(t.x)) AS m FROM t;
CREATE VIEW most_matched AS SELECT g, SUM(x) AS s, (SELECT COUNT(*) FROM u WHERE u.g = t.g) AS c FROM t GROUP BY g QUALIFY RANK() OVER (ORDER BY c DESC) = 1;
CREATE VIEW top_matched AS SELECT g, SUM(x) AS s FROM t GROUP BY g HAVING (SELECT COUNT(*) FROM u WHERE u.g = t.g) > 0 QUALIFY ROW_NUMBER() OVER (ORDER BY SUM(x) DESC, g) <= 1;

-- step
INSERT INTO t VALUES (1, 'a', 1), (1, 'b', 5), (2, 'a', 3), (NULL, 'a', 2), (3, NULL, NULL);
INSERT INTO u VALUES (1, 4), (2, 1), (2, 7), (NULL, 9);
-- step
DELETE FROM t WHERE g = 2;
INSERT INTO u VALUES (3, 2);
-- step
INSERT INTO t VALUES (4, 'c', 200), (4, 'c', 1), (1, 'a', 6);
DELETE FROM u WHERE g = 1;
-- step
DELETE FROM u;
-- step
INSERT INTO u VALUES (1, 0), (1, NULL), (4, 201), (NULL, NULL);
DELETE FROM t WHERE g IS NULL;
-- step
DELETE FROM t WHERE g <> 3;

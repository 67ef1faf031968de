-- title: scalar subqueries, uncorrelated and correlated (equality and inequality): COUNT of an empty group is 0, other aggregates NULL
CREATE TABLE o (id INT, k INT, v INT);
CREATE TABLE s (k INT, w INT);

CREATE VIEW total AS SELECT id, v - (SELECT SUM(w) FROM s) AS d FROM o;
CREATE VIEW per_key AS SELECT id, (SELECT COUNT(*) FROM s WHERE s.k = o.k) AS n, (SELECT MAX(w) FROM s WHERE s.k = o.k) AS m FROM o;
CREATE VIEW below AS SELECT id, (SELECT COUNT(*) FROM s WHERE s.w < o.v) AS n FROM o;
CREATE VIEW count_plus AS SELECT id, (SELECT COUNT(w) + 1 FROM s WHERE s.k = o.k) AS n FROM o;
CREATE VIEW above_avg AS SELECT id FROM o WHERE v > (SELECT AVG(w) FROM s WHERE s.k = o.k);
CREATE VIEW agg_over AS SELECT k, SUM(v) AS sv FROM o WHERE v >= (SELECT MIN(w) FROM s) GROUP BY k;

-- step
INSERT INTO o VALUES (1, 1, 5), (1, 1, 5), (2, 2, 50), (3, NULL, 7), (4, 4, NULL);
INSERT INTO s VALUES (1, 3), (1, 4), (2, 9), (NULL, 1);
-- step
DELETE FROM s WHERE k = 2;
-- step
INSERT INTO s VALUES (2, 60), (4, 4);
DELETE FROM s WHERE k = 1 AND w = 3;
-- step
DELETE FROM s;
-- step
INSERT INTO s VALUES (1, 1), (1, 1);
DELETE FROM o WHERE id = 2;

-- title: scalar subqueries that are not aggregates: one row gives its value, none gives NULL; correlated and uncorrelated
CREATE TABLE o (id INT, k INT);
CREATE TABLE s (k INT, w INT);
CREATE TABLE one (x INT);

CREATE VIEW looked_up AS SELECT id, (SELECT s.w FROM s WHERE s.k = o.k) AS w FROM o;
CREATE VIEW next_w AS SELECT id, (SELECT DISTINCT s.w FROM s WHERE s.k > o.k AND s.w > 100) AS w FROM o;
CREATE VIEW plus_one AS SELECT id, k + (SELECT x FROM one) AS kx FROM o;

-- step
INSERT INTO o VALUES (1, 1), (1, 1), (2, 2), (3, NULL);
INSERT INTO s VALUES (1, 10), (2, 20), (NULL, 30);
INSERT INTO one VALUES (5);
-- step
DELETE FROM s WHERE k = 1;
INSERT INTO s VALUES (3, 200), (4, 200);
-- step
DELETE FROM one;
INSERT INTO s VALUES (1, 11);
-- step
INSERT INTO one VALUES (NULL);
DELETE FROM s WHERE k = 2;

-- title: deleting every row of every table empties every view (global aggregates keep their row)
CREATE TABLE t (k INT, v INT);
CREATE TABLE u (k INT, w INT);

CREATE VIEW j AS SELECT t.k, t.v, u.w FROM t JOIN u ON t.k = u.k;
CREATE VIEW agg AS SELECT k, SUM(v) AS total FROM t GROUP BY k;
CREATE VIEW total AS SELECT COUNT(*) AS n, SUM(v) AS s FROM t;
CREATE VIEW d AS SELECT DISTINCT k FROM u;

-- step
INSERT INTO t VALUES (1, 10), (2, 20), (2, 21);
INSERT INTO u VALUES (1, 100), (2, 200), (2, 200);
-- step
DELETE FROM t;
DELETE FROM u;
-- step
INSERT INTO t VALUES (3, 30);
INSERT INTO u VALUES (3, 300);
-- step
DELETE FROM u;
-- step
DELETE FROM t;

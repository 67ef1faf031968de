-- title: NULLs in every position: keys, values, predicates, aggregates, set operations
CREATE TABLE a (k INT, v INT, s STRING);
CREATE TABLE b (k INT, w INT);

CREATE VIEW joined AS SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k;
CREATE VIEW sums AS SELECT k, SUM(v) AS sv, COUNT(v) AS cv, COUNT(*) AS n FROM a GROUP BY k;
CREATE VIEW arith AS SELECT k, v + 1 AS v1, v * NULL AS vn, s || 'x' AS sx, v > 2 AS big FROM a;
CREATE VIEW keys AS SELECT k FROM a UNION SELECT k FROM b;
CREATE VIEW filtered AS SELECT k FROM a WHERE v <> 1 OR s = 'q';

-- step
INSERT INTO a VALUES (NULL, NULL, NULL), (1, NULL, 'q'), (NULL, 3, NULL);
INSERT INTO b VALUES (NULL, 1), (1, NULL);
-- step
INSERT INTO a VALUES (1, 1, NULL), (2, 5, 'r');
INSERT INTO b VALUES (2, 7);
-- step
UPDATE a SET v = NULL WHERE k = 2;
-- step
DELETE FROM a WHERE k IS NULL;
DELETE FROM b WHERE w IS NULL;

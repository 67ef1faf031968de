-- title: GROUP BY with COUNT(*) and COUNT(column) over NULLs, NULL as a group key
CREATE TABLE t (g STRING, x INT);

CREATE VIEW counts AS SELECT g, COUNT(*) AS n, COUNT(x) AS n_x FROM t GROUP BY g;

-- step
INSERT INTO t VALUES ('a', 1), ('a', NULL), ('b', 2);
-- step
INSERT INTO t VALUES (NULL, 3), (NULL, NULL), ('b', 2);
-- step
UPDATE t SET x = 5 WHERE x IS NULL;
-- step
DELETE FROM t WHERE g = 'a';
-- step
DELETE FROM t WHERE g IS NULL;

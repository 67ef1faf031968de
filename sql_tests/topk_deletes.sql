-- title: top-k maintained from a sorted integral: deletes of the top row and of whole partitions, ties, NULL keys, duplicate rows, OFFSET, per-group top-k
CREATE TABLE t (id INT, g STRING, x INT);

CREATE VIEW top3 AS
SELECT id, g, x FROM t ORDER BY x DESC, id LIMIT 3;

CREATE VIEW low_page AS
SELECT x, g FROM t ORDER BY x, g LIMIT 2 OFFSET 1;

CREATE VIEW best2_per_g AS
SELECT g, id, x FROM (
  SELECT g, id, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x DESC NULLS FIRST, id) AS rn FROM t
) s WHERE rn <= 2;

CREATE VIEW first_per_g AS
SELECT g, x FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) < 2;

CREATE VIEW top_dups AS
SELECT x FROM t ORDER BY x DESC LIMIT 4;

-- step
INSERT INTO t VALUES (1, 'a', 10), (2, 'a', 20), (3, 'a', 30), (4, 'b', 5), (5, 'b', NULL), (6, NULL, 7), (7, 'c', 20);
-- step
DELETE FROM t WHERE id = 3;
-- step
INSERT INTO t VALUES (8, 'a', 20), (9, 'a', 20), (10, 'b', 5);
-- step
DELETE FROM t WHERE g = 'a';
-- step
DELETE FROM t WHERE x IS NULL OR g IS NULL;
INSERT INTO t VALUES (11, NULL, NULL), (12, 'c', 40), (13, 'c', 40);
-- step
UPDATE t SET x = x - 100 WHERE x >= 20;
-- step
DELETE FROM t;
-- step
INSERT INTO t VALUES (14, 'd', 1), (14, 'd', 1), (14, 'd', 1), (15, 'd', 0);
-- step
DELETE FROM t WHERE id = 14;

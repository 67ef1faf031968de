-- title: ROW_NUMBER, RANK, DENSE_RANK per partition; NULL partition keys, NULL and tied order keys, duplicate rows, deletes that empty partitions
CREATE TABLE t (id INT, g STRING, x INT);

CREATE VIEW ranked AS
SELECT id, g, x,
       RANK() OVER (PARTITION BY g ORDER BY x) AS r,
       DENSE_RANK() OVER (PARTITION BY g ORDER BY x DESC) AS dr,
       ROW_NUMBER() OVER (PARTITION BY g ORDER BY x, id) AS rn
FROM t;

-- step
INSERT INTO t VALUES (1, 'a', 10), (2, 'a', 20), (3, 'a', 20), (4, 'b', NULL), (5, 'b', 5), (6, NULL, 1), (7, NULL, 2);
-- step
INSERT INTO t VALUES (8, 'a', 15), (3, 'a', 20), (9, NULL, NULL);
-- step
DELETE FROM t WHERE g = 'b';
-- step
UPDATE t SET x = 30 WHERE id = 1;
-- step
DELETE FROM t WHERE g IS NULL;
INSERT INTO t VALUES (10, 'c', 1);

-- title: SELECT DISTINCT over a bag: a row leaves only with its last copy
CREATE TABLE t (a INT, b STRING, c INT);

CREATE VIEW d AS SELECT DISTINCT a, b FROM t;
CREATE VIEW d_expr AS SELECT DISTINCT a % 2 AS parity FROM t;

-- step
INSERT INTO t VALUES (1, 'x', 1), (1, 'x', 2), (2, NULL, 3);
-- step
INSERT INTO t VALUES (2, NULL, 4), (3, 'z', 5);
-- step
DELETE FROM t WHERE c = 1;
-- step
DELETE FROM t WHERE c = 2;
-- step
UPDATE t SET a = 4 WHERE a = 3;
-- step
DELETE FROM t WHERE a = 2;

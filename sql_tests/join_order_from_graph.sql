-- title: join order follows the equi-join graph, filters go below the joins, a key column used twice
CREATE TABLE t1 (a INT, b INT);
CREATE TABLE t2 (c INT, d INT);
CREATE TABLE t3 (e INT, f INT);
-- FROM order would cross-join t1 and t3; the predicates connect t1-t2-t3
CREATE VIEW chain AS SELECT a, d, f FROM t1, t3, t2 WHERE c = a AND e = c AND b > 1;
-- c is paired with both a and b: one key pair, the other equality filters after the join
CREATE VIEW twice AS SELECT a, b, d FROM t1, t2 WHERE a = c AND b = c;
-- step
INSERT INTO t1 VALUES (1, 2), (2, 3), (3, 3), (NULL, NULL), (2, 2);
INSERT INTO t2 VALUES (1, 5), (2, 6), (3, 7), (NULL, 0);
INSERT INTO t3 VALUES (1, 7), (2, 8), (2, 9), (NULL, 1);
-- step
DELETE FROM t2 WHERE c = 2;
INSERT INTO t1 VALUES (1, 1);
-- step
INSERT INTO t2 VALUES (2, 60);
DELETE FROM t3 WHERE f = 9;

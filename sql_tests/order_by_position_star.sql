-- title: an ORDER BY / GROUP BY position after SELECT * counts the expanded columns
CREATE TABLE t (a INT, b INT, s STRING);
CREATE VIEW top_b AS SELECT * FROM t ORDER BY 2 DESC, 1 LIMIT 2;
CREATE VIEW top_s AS SELECT t.* FROM t ORDER BY 3, 1 DESC LIMIT 1;
-- step
INSERT INTO t VALUES (1, 5, 'x'), (2, 3, 'a'), (3, 9, 'a');
-- step
DELETE FROM t WHERE a = 3;

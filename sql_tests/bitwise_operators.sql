-- title: &, |, ^ and ~ on integers: two's complement as Spark's, the wider operand's type, NULL in NULL out, named as Spark names them
-- oracle: spark
CREATE TABLE t (id INT, x INT, y INT, b BIGINT, s SMALLINT, k TINYINT);
CREATE VIEW v AS SELECT id, x & y, x | 1, x ^ y, ~x, b & x, s | k, ~k, NULL & x, (x & 255) = 5 AS low_bits, x & y | b FROM t;
CREATE VIEW flags AS SELECT x & 4 AS bit2, COUNT(*) AS n FROM t WHERE x & 1 = 1 GROUP BY x & 4;
-- step
INSERT INTO t VALUES (1, 5, 3, 9223372036854775807, 7, 1), (2, -3, 6, -1, -32768, -128), (3, NULL, 1, NULL, NULL, NULL),
  (4, 2147483647, -2147483648, 0, 1, 127), (5, 13, 13, 5, 5, 5);
-- step
DELETE FROM t WHERE id IN (1, 3);
INSERT INTO t VALUES (6, 7, 0, -9223372036854775808, 32767, 0);

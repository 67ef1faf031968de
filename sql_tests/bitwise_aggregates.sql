-- title: bit_and, bit_or and bit_xor per group (xor counts each copy: a value held twice cancels), NULLs skipped, NULL for no value, maintained from the group's multiset; bit_count of a value widened to BIGINT
-- oracle: spark (DuckDB's bit_count counts a narrow value's own bits: bit_count(-1::TINYINT) is 8, Spark's 64)
CREATE TABLE t (id INT, g INT, x INT, k TINYINT, b BIGINT, flag BOOLEAN);
CREATE VIEW bits AS SELECT g, bit_and(x) AS a, bit_or(x) AS o, bit_xor(x) AS xo, bit_xor(DISTINCT x) AS xd, bit_or(k) AS ok,
  bit_and(b) AS ab, COUNT(*) AS c FROM t GROUP BY g;
CREATE VIEW total AS SELECT bit_xor(x) AS xo, bit_or(b) AS ob FROM t;
CREATE VIEW counts AS SELECT id, bit_count(x) AS cx, bit_count(k) AS ck, bit_count(b) AS cb, bit_count(flag) AS cf FROM t;
-- step
INSERT INTO t VALUES (1, 1, 6, 1, 12, true), (2, 1, 3, 2, -1, false), (3, 1, 3, 4, 7, NULL), (4, 2, NULL, NULL, NULL, NULL),
  (5, 3, -1, -128, -9223372036854775808, true), (6, 3, 2147483647, 127, 9223372036854775807, false);
-- step
DELETE FROM t WHERE id = 2;
INSERT INTO t VALUES (7, 2, 5, 0, 0, true);
-- step
DELETE FROM t WHERE g = 1 AND x = 3;
DELETE FROM t WHERE id = 6;

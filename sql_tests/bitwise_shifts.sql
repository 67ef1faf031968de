-- title: shiftleft, shiftright, shiftrightunsigned and << >> as Java shifts (the distance mod 32 or 64, wrapping, TINYINT and SMALLINT widened to INT), as Spark 4
-- oracle: spark (DuckDB has no shiftrightunsigned, and its << and >> are not Java's shifts)
CREATE TABLE t (id INT, i INT, b BIGINT, n INT, s SMALLINT);
CREATE VIEW shifted AS SELECT id, shiftleft(i, n) AS il, shiftright(i, n) AS ir, shiftrightunsigned(i, n) AS iu,
  b << n AS bl, b >> n AS br, shiftrightunsigned(b, n) AS bu, shiftleft(s, 20) AS sl, i << 31 AS top FROM t;
CREATE VIEW buckets AS SELECT shiftrightunsigned(b, 60) AS bucket, COUNT(*) AS c, SUM(shiftright(i, 4)) AS total FROM t GROUP BY 1;
-- step
INSERT INTO t VALUES (1, 1, 1, 31, 1), (2, -1, -1, 1, -1), (3, 2147483647, 9223372036854775807, 32, 32767),
  (4, -2147483648, -9223372036854775808, 63, -32768), (5, 12345, 1099511627783, -1, 7), (6, NULL, 5, 2, NULL), (7, 5, NULL, NULL, 3);
-- step
DELETE FROM t WHERE id IN (2, 6);
INSERT INTO t VALUES (8, -98765, -1125899906842627, 65, 100), (9, 7, 7, -31, 1);

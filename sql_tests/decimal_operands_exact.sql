-- title: decimal arithmetic computes on the operands' exact values and rounds the result once, as Spark does
-- oracle: spark (DuckDB types DECIMAL(38,18) products and quotients differently)
CREATE TABLE t (id INT, a DECIMAL(38, 18), b DECIMAL(38, 18), x INT, m DECIMAL(5, 2), PRIMARY KEY (id));
CREATE VIEW wide AS SELECT id, a * b AS p, a + b AS s, a - b AS d, a / b AS q, a % b AS r FROM t;
CREATE VIEW mixed AS SELECT id, m / x AS mx, x / m AS xm, m * x AS mm, m + x AS ma, m % x AS mr, m / 3 AS m3,
  pmod(m, 7) AS pm FROM t;
-- a quotient and a product whose intermediates pass 128 bits: exact on the unscaled integers
CREATE VIEW scaled AS SELECT id, a / CAST(m AS DECIMAL(38, 10)) AS am, b * CAST(m AS DECIMAL(38, 10)) AS bm FROM t;
CREATE VIEW totals AS SELECT x > 0 AS positive, sum(a * b) AS sp, sum(m / x) AS smx FROM t GROUP BY x > 0;
-- step
INSERT INTO t VALUES (1, 1.0000005, 1.0000005, 5000, 1.50), (2, 0.000000000000000005, 0.000000000000000005, -2147483648, 999.99),
  (3, 12345678901234567890.123456789012345678, 0.5, 7, -0.01);
-- step
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (4, -0.0000005, 0.9999995, 2147483647, -999.99), (5, 99999999999999999999.999999999999999999, 3, -1000, 0.05);
-- step
-- the exact product 123.456789499…995 of row 6 rounds to 123.456789; rounded at scale 18 first it was a tie
INSERT INTO t VALUES (6, 0.000000000000000005, 24691357899999999999.999999999999999999, 3, 0.07);

-- title: mathematical functions (logarithms, powers, trigonometry, pmod, nanvl, try_ arithmetic), typed and evaluated as Spark 4
-- oracle: spark (DuckDB's ln(0) is -inf where Spark's is NULL, and it lacks pmod, nanvl and the try_ functions)
CREATE TABLE t (id INT, x INT, b BIGINT, d DOUBLE, m DECIMAL(5, 2), PRIMARY KEY (id));
CREATE VIEW logs AS SELECT id, sqrt(d) AS sq, cbrt(d) AS cb, exp(d) AS ex, expm1(d) AS em, ln(d) AS l, log(d) AS l1,
  log10(d) AS l10, log2(x) AS l2, log1p(d) AS l1p, log(2, d) AS lb, log(x, 8) AS lx, power(d, 2) AS p2, pow(x, 3) AS p3,
  power(2, x) AS px FROM t;
CREATE VIEW trig AS SELECT id, sin(d) AS s, cos(d) AS c, tan(d) AS t, asin(d / 10) AS asn, acos(d / 10) AS acs, atan(d) AS at,
  atan2(d, x) AS a2, sinh(d) AS sh, cosh(d) AS ch, tanh(d) AS th, asinh(d) AS ash, acosh(d) AS ach, atanh(d / 10) AS ath,
  cot(d) AS ct, sec(d) AS se, csc(d) AS cs, degrees(d) AS dg, radians(x) AS rd, hypot(d, x) AS hy, pi() * x AS px, e() AS e FROM t;
CREATE VIEW signs AS SELECT id, sign(x) AS sx, signum(d) AS sd, sign(m) AS sm, rint(d) AS ri, isnan(d) AS nan,
  nanvl(d, -1.0) AS nv, factorial(x) AS f, zeroifnull(m) AS zm, nullifzero(x) AS nz, negative(CAST(x AS BIGINT)) AS nx, negative(m) AS nm,
  positive(d) AS pd, negative(-2147483647) AS nl FROM t;
CREATE VIEW remainders AS SELECT id, pmod(x, 3) AS px, pmod(x, -3) AS pn, pmod(b, CAST(x AS BIGINT) * 2 + 1) AS pb, pmod(m, 2) AS pm, pmod(d, 2.5) AS pd,
  CASE WHEN x <> 0 THEN pmod(7, x) END AS guarded FROM t;
CREATE VIEW tries AS SELECT id, try_divide(x, x) AS dv, try_divide(m, x) AS dm, try_add(x, 2147483630) AS ad,
  try_subtract(b, 9223372036854775800) AS sb, try_multiply(x, 1000000000) AS ml, try_mod(b, x) AS md FROM t;
CREATE VIEW by_magnitude AS SELECT floor(ln(abs(d))) AS magnitude, count(*) AS n, sum(sqrt(abs(d))) AS roots FROM t
  WHERE d <> 0 GROUP BY floor(ln(abs(d)));
CREATE VIEW floors AS SELECT id, floor(d) AS f, ceil(d / 3) AS c FROM t;
-- step
INSERT INTO t VALUES (1, 2, 10, 2.5, 1.50), (2, -3, -7, -0.5, -2.25), (3, 0, 9223372036854775807, 0.0, 0.00);
-- step
INSERT INTO t VALUES (4, NULL, NULL, NULL, NULL), (5, 21, -9223372036854775808, 1000.0, 999.99), (6, 1, 1, CAST('NaN' AS DOUBLE), -0.01);
DELETE FROM t WHERE id = 2;
-- step
DELETE FROM t WHERE id IN (1, 5);
INSERT INTO t VALUES (7, -2147483648, 5, -1e-300, 0.5), (8, 7, -5, 123.456, -999.99);

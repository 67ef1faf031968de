-- title: ROUND/BROUND of DOUBLE round the shortest decimal form (Spark: BigDecimal(d.toString)), not the binary value
-- oracle: spark (DuckDB rounds the binary value: ROUND(1.005, 2) = 1.0 there, 1.01 in Spark)
CREATE TABLE t (d DOUBLE, c DECIMAL(10,3), i INT);
CREATE VIEW r AS SELECT d, ROUND(d, 2) AS r2, BROUND(d, 2) AS b2, ROUND(d, -1) AS rm1, BROUND(d, -1) AS bm1,
  ROUND(d) AS r0, ROUND(d, 1) AS r1 FROM t;
CREATE VIEW exact AS SELECT c, ROUND(c, 2) AS rc, BROUND(c, 2) AS bc, BROUND(c, -1) AS bcm, i, ROUND(i, -1) AS ri,
  BROUND(i, -1) AS bi FROM t;
CREATE VIEW far AS SELECT d, ROUND(d, -400) AS z, BROUND(d, 400) AS k FROM t;
CREATE VIEW grouped AS SELECT ROUND(d, 1) AS k, count(*) AS n FROM t GROUP BY ROUND(d, 1);
-- step
INSERT INTO t VALUES (1.005, 1.005, 25), (0.285, 1.015, 35), (-1.005, -1.025, -25), (2.5, 2.5, 15),
  (25.0, 0.125, 5), (-0.001, 0.0, -15), (1.0E300, 1.0, 0), (1.0E-5, 1.0, 1), (0.15, 0.15, 45), (0.25, 0.35, 55);
-- step
INSERT INTO t VALUES (-2.5, -2.5, -5), (35.0, 35.0, 65), (1234.5678, 123.456, 125), (NULL, NULL, NULL), (0.045, 0.045, 75);
-- step
DELETE FROM t WHERE d = 1.005 OR d IS NULL;

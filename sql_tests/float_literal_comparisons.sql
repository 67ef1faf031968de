-- title: a FLOAT column meets a literal as Spark does: in its own type only when the literal is exactly a FLOAT, else both as DOUBLE
-- oracle: spark (1.1 is not a FLOAT: Spark compares 1.1f, widened to 1.100000023841858, with the DOUBLE 1.1)
CREATE TABLE t (id INT, f FLOAT, PRIMARY KEY (id));
CREATE VIEW compared AS SELECT id, f = 1.1 AS eq_inexact, f = 0.5 AS eq_exact, f > 1.1 AS gt_inexact, f <= 16777217 AS le_int,
  f IN (1.1, 0.5) AS in_list, f BETWEEN 1.1 AND 2 AS btw FROM t;
CREATE VIEW cast_to_decimal AS SELECT id, CAST(f AS DECIMAL(12, 3)) AS d3, CAST(f AS DECIMAL(38, 10)) AS d10, CAST(f AS DOUBLE) AS dbl FROM t;
-- step
INSERT INTO t VALUES (1, 1.1), (2, 0.5), (3, 123456.7), (4, 16777216), (5, NULL), (6, -2.675);
-- step
DELETE FROM t WHERE id = 2;
INSERT INTO t VALUES (7, 1.1000001), (8, 3.25);

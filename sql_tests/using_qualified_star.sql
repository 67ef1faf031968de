-- title: a side's qualified star over a JOIN ... USING lists the join column first, as Spark's does (x4.* of t2 (k, v, s, d) is s, k, v, d); the DuckDB oracle reorders its answer to Spark's, also when its translation spells the USING out (a CAST of round needs it)
-- oracle: spark
CREATE TABLE t1 (v INT, s STRING);
CREATE TABLE t2 (k INT, v INT, s STRING, d DECIMAL(5, 2));
CREATE VIEW right_star AS SELECT x4.*, x3.v AS left_v, CAST(round(x4.d, 1) AS INT) AS r FROM t1 x3 LEFT JOIN t2 x4 USING (s);
CREATE VIEW left_star AS SELECT x3.* FROM t1 x3 JOIN t2 x4 USING (s);
-- step
INSERT INTO t1 VALUES (1, 'a'), (2, 'b'), (3, NULL);
INSERT INTO t2 VALUES (0, 2, 'a', 1.50), (5, 6, 'a', NULL), (7, 8, 'c', 2.00);
-- step
DELETE FROM t2 WHERE k = 0;
INSERT INTO t2 VALUES (9, 9, 'b', 0.01);

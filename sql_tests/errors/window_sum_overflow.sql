-- title: a running SUM of BIGINT that overflows rejects the step, as Spark's ANSI mode raises
CREATE TABLE t (k INT, b BIGINT);
CREATE VIEW v AS SELECT k, SUM(b) OVER (ORDER BY k) AS s FROM t;
-- step
INSERT INTO t VALUES (1, 9223372036854775807);
-- step
INSERT INTO t VALUES (2, 1);

-- title: division by zero at run time rejects the step, as Spark's ANSI mode raises
CREATE TABLE t (a INT, b INT);
CREATE VIEW v AS SELECT a / b AS ratio FROM t;
-- step
INSERT INTO t VALUES (1, 2);
-- step
INSERT INTO t VALUES (3, 0);

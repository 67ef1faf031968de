-- title: INSERT of a string into an INT column is refused, as Spark's ANSI store assignment refuses it
CREATE TABLE t (a INT, b BOOLEAN);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO t VALUES (1, true), ('12', false);

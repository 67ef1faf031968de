-- title: a value longer than CHAR(n) or VARCHAR(n) rejects the step (Spark: EXCEED_LIMIT_LENGTH); trailing spaces beyond n are dropped
CREATE TABLE t (c CHAR(3), v VARCHAR(3));
CREATE VIEW w AS SELECT c, v, length(c) AS n FROM t;
-- step
INSERT INTO t VALUES ('ab', 'abc   ');
-- step
INSERT INTO t VALUES ('x', 'abcd');

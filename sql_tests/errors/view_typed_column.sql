-- title: a view's column list has no types
CREATE TABLE t (a INT);
CREATE VIEW v (x INT) AS SELECT a FROM t;

-- title: a view's column list names as many columns as its query returns
CREATE TABLE t (a INT, b INT);
CREATE MATERIALIZED VIEW v (x) AS SELECT a, b FROM t;

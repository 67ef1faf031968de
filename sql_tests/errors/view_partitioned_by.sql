-- title: a view's PARTITIONED BY is refused, not dropped
CREATE TABLE t (a INT);
CREATE MATERIALIZED VIEW v PARTITIONED BY (a) AS SELECT a FROM t;

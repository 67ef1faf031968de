-- title: LIMIT cannot be maintained incrementally here
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t ORDER BY a LIMIT 10;

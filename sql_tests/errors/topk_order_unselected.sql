-- title: a top-k must order by selected columns
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g FROM t ORDER BY x LIMIT 3;

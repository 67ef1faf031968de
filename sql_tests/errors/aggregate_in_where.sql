-- title: an aggregate in WHERE is refused
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g FROM t WHERE SUM(x) > 10 GROUP BY g;

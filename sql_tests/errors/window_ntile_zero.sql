-- title: NTILE of a bucket count that is not a positive integer literal is refused, as Spark refuses it
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, NTILE(0) OVER (PARTITION BY g ORDER BY x) AS q FROM t;

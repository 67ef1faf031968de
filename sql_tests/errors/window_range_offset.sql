-- title: a RANGE frame with value offsets over two ORDER BY keys is refused (as Spark)
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, SUM(x) OVER (ORDER BY x, g RANGE BETWEEN 5 PRECEDING AND CURRENT ROW) AS s FROM t;

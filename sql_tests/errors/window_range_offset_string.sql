-- title: a RANGE frame with value offsets over a STRING key is refused (as Spark)
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, COUNT(*) OVER (ORDER BY g RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS n FROM t;

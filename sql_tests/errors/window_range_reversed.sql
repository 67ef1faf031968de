-- title: a RANGE frame whose lower bound exceeds its upper bound is refused (as Spark)
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, COUNT(*) OVER (ORDER BY x RANGE BETWEEN 1 FOLLOWING AND 1 PRECEDING) AS n FROM t;

-- title: percentile's percentage must be a number literal between 0.0 and 1.0, as Spark requires
CREATE TABLE t (g INT, x DOUBLE);
CREATE VIEW v AS SELECT g, percentile(x, 1.5) AS p FROM t GROUP BY g;

-- title: percentile's third argument (a frequency per row) is refused by name, not dropped (sqlglot's parser drops it)
CREATE TABLE t (g INT, x DOUBLE, n INT);
CREATE VIEW v AS SELECT g, percentile(DISTINCT x, 0.5, n) AS p FROM t GROUP BY g;

-- title: mode(x) without deterministic => true gives any of the most frequent values in Spark when several tie, which no answer can match: refused, with the forms that say which
CREATE TABLE t (g INT, x INT);
CREATE VIEW v AS SELECT g, mode(x) AS m FROM t GROUP BY g;

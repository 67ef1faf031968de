-- title: a SELECT column that is neither grouped nor aggregated
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, COUNT(*) AS n FROM t GROUP BY g;

-- title: an ARRAY (from collect_list) as a GROUP BY key
CREATE TABLE t (g INT, x INT);
CREATE VIEW v AS SELECT g, collect_list(x) AS xs FROM t GROUP BY g;
CREATE VIEW w AS SELECT xs, COUNT(*) AS n FROM v GROUP BY xs;

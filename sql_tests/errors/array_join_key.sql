-- title: an ARRAY as an equi-join key
CREATE TABLE t (g INT, x INT);
CREATE VIEW v AS SELECT g, collect_set(x) AS xs FROM t GROUP BY g;
CREATE VIEW w AS SELECT a.g FROM v AS a, v AS b WHERE a.xs = b.xs AND a.g < b.g;

-- title: an ARRAY compared with <>
CREATE TABLE t (g INT, x INT);
CREATE VIEW v AS SELECT g, collect_list(x) AS xs FROM t GROUP BY g;
CREATE VIEW w AS SELECT g FROM v WHERE xs <> sort_array(xs, false);

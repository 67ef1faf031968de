-- title: a window function dbspc does not maintain (NTILE) is refused, naming it
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, NTILE(4) OVER (PARTITION BY g ORDER BY x) AS q FROM t;

-- title: a window function dbspc does not maintain (STDDEV over a window) is refused, naming it
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, STDDEV(x) OVER (PARTITION BY g ORDER BY x) AS q FROM t;

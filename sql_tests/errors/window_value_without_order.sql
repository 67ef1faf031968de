-- title: FIRST_VALUE over a window without ORDER BY depends on the order rows arrive in, and is refused
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, FIRST_VALUE(x) OVER (PARTITION BY g) AS f FROM t;

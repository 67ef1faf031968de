-- title: IGNORE NULLS is refused where dbspc does not implement it (LAG), naming the construct
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, LAG(x) IGNORE NULLS OVER (PARTITION BY g ORDER BY x) AS p FROM t;

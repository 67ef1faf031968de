-- title: window functions are not supported yet
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn FROM t;

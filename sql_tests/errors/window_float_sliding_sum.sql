-- title: SUM of a DOUBLE over a sliding frame wider than 64 rows is refused (each frame is added afresh, as Spark adds it)
CREATE TABLE t (k INT, x DOUBLE);
CREATE VIEW v AS SELECT k, SUM(x) OVER (ORDER BY k ROWS BETWEEN 100 PRECEDING AND CURRENT ROW) AS s FROM t;

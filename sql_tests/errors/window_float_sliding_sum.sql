-- title: SUM of a DOUBLE over a sliding frame is refused (frame sums would be differences of rounded running sums)
CREATE TABLE t (k INT, x DOUBLE);
CREATE VIEW v AS SELECT k, SUM(x) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM t;

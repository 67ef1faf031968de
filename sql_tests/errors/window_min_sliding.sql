-- title: MIN over a RANGE frame bounded at both ends is not maintained yet (a ROWS frame is)
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, MIN(x) OVER (ORDER BY x RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM t;

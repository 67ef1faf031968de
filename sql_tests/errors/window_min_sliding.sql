-- title: MIN over a frame bounded at both ends is not maintained yet
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, MIN(x) OVER (ORDER BY x ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM t;

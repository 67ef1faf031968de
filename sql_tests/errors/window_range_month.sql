-- title: RANGE frame offsets in months over a DATE key are not supported (months have no fixed length)
CREATE TABLE t (d DATE, x INT);
CREATE VIEW v AS SELECT d, SUM(x) OVER (ORDER BY d RANGE BETWEEN INTERVAL 1 MONTH PRECEDING AND CURRENT ROW) AS s FROM t;

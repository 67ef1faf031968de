-- title: add_months past an INT's days from 1970-01-01 fails as Spark's ARITHMETIC_OVERFLOW (it crashed in polars' date constructor)
CREATE TABLE t (d DATE, n INT);
CREATE VIEW v AS SELECT add_months(d, n) AS m FROM t;
-- step
INSERT INTO t VALUES (DATE '2024-01-01', -2147483647);

-- title: make_date of a date that does not exist rejects the step (Spark ANSI: DATETIME_FIELD_OUT_OF_BOUNDS), but not where CASE skips it
CREATE TABLE t (y INT, m INT, d INT);
CREATE VIEW v AS SELECT CASE WHEN m <= 12 THEN make_date(y, m, d) END AS md FROM t;
CREATE VIEW w AS SELECT make_date(y, m, d) AS md FROM t WHERE m <= 12;
-- step
INSERT INTO t VALUES (2020, 2, 29), (2020, 13, 1), (NULL, 2, 30);
-- step
INSERT INTO t VALUES (2019, 2, 29);

-- title: next_day of a day name Spark does not know rejects a step with a date (Spark ANSI: ILLEGAL_DAY_OF_WEEK), not one of NULL dates
CREATE TABLE t (d DATE);
CREATE VIEW v AS SELECT next_day(d, 'Thurs') AS nd FROM t;
-- step
INSERT INTO t VALUES (NULL);
-- step
INSERT INTO t VALUES (DATE '2024-01-01');

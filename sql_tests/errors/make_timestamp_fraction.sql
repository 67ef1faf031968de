-- title: make_timestamp of 60 seconds and a fraction rejects the step (Spark ANSI: INVALID_FRACTION_OF_SECOND); 60 itself is the next minute
CREATE TABLE t (s DECIMAL(8,6));
CREATE VIEW v AS SELECT make_timestamp(2024, 2, 29, 23, 59, s) AS ts FROM t;
-- step
INSERT INTO t VALUES (60), (59.999999), (NULL);
-- step
INSERT INTO t VALUES (60.5);

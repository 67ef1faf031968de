-- title: timestamp_millis past the microseconds a long holds rejects the step (Spark: DATETIME_OVERFLOW)
CREATE TABLE t (n BIGINT);
CREATE VIEW v AS SELECT timestamp_millis(n) AS ts FROM t;
-- step
INSERT INTO t VALUES (0), (NULL);
-- step
INSERT INTO t VALUES (9223372036854776);

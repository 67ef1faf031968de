-- title: date_format's pattern must be a constant string
CREATE TABLE t (ts TIMESTAMP, p STRING);
CREATE VIEW v AS SELECT date_format(ts, p) AS f FROM t;

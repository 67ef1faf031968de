-- title: INSERT of 'yes' into a BOOLEAN column is refused (Spark: CANNOT_SAFELY_CAST)
CREATE TABLE t (a INT, b BOOLEAN);
CREATE VIEW v AS SELECT a FROM t;
-- step
UPDATE t SET b = 'yes' WHERE a = 1;

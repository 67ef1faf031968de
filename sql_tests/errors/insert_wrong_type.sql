-- title: INSERT of a BOOLEAN into a DATE column is a user error
CREATE TABLE t (a INT, d DATE);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO t VALUES (1, true);

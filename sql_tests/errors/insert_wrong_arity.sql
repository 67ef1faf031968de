-- title: INSERT with the wrong number of values
CREATE TABLE t (a INT, b STRING);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO t VALUES (1, 'x'), (2);

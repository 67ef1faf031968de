-- title: UPDATE of a column the table does not have
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO t VALUES (1);
-- step
UPDATE t SET b = 2 WHERE a = 1;

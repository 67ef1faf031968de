-- title: a step changes tables; a view is not a table that does not exist
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO v VALUES (1);

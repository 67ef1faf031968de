-- title: INSERT into a table that is not declared
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
-- step
INSERT INTO u VALUES (1);

-- title: two relations with the same name
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
CREATE VIEW v AS SELECT a + 1 AS b FROM t;

-- title: a view read by a later view cannot be replaced (the reader was bound to the first definition)
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
CREATE VIEW w AS SELECT a FROM v;
CREATE OR REPLACE VIEW v AS SELECT a + 1 AS a FROM t;

-- title: a view reading a table that does not exist
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM missing_table;

-- title: a WHERE condition that is not BOOLEAN
CREATE TABLE t (a INT, s STRING);
CREATE VIEW v AS SELECT a FROM t WHERE s;

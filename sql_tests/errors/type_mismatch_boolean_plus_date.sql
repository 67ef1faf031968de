-- title: adding a BOOLEAN and a DATE is a type error
CREATE TABLE t (flag BOOLEAN, d DATE);
CREATE VIEW v AS SELECT flag + d AS x FROM t;

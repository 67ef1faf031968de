-- title: a function dbspc does not know
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT frobnicate(s) AS f FROM t;

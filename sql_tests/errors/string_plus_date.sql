-- title: 'a' + DATE is a type error, as in Spark
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS SELECT s + d AS x FROM t;

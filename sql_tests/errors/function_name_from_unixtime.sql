-- title: an unsupported function is named as written (FROM_UNIXTIME), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, FROM_UNIXTIME(1, 'yyyy') AS x FROM t;

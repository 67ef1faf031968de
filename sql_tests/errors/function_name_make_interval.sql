-- title: an unsupported function is named as written (MAKE_INTERVAL), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, MAKE_INTERVAL(1) AS x FROM t;

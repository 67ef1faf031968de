-- title: an unsupported function is named as written (BASE64), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, BASE64(s) AS x FROM t;

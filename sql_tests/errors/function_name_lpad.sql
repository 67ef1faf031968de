-- title: an unsupported function is named as written (LPAD), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, LPAD(s, 5, 'x') AS x FROM t;

-- title: an unsupported function is named as written (DATE_ADD), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, DATE_ADD(d, 1) AS x FROM t;

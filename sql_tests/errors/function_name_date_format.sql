-- title: an unsupported function is named as written (DATE_FORMAT), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, DATE_FORMAT(d, 'yyyy') AS x FROM t;

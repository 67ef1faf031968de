-- title: an unsupported function is named as written (SPLIT), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, SPLIT(s, ',') AS x FROM t;

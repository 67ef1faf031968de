-- title: an unsupported function is named as written (MONTHS_BETWEEN), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, MONTHS_BETWEEN(d, d) AS x FROM t;

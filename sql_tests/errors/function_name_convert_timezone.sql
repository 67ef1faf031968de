-- title: an unsupported function is named as written (CONVERT_TIMEZONE), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, CONVERT_TIMEZONE('UTC', 'UTC', d) AS x FROM t;

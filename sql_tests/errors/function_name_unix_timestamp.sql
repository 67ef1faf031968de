-- title: an unsupported use of a function is named as written (UNIX_TIMESTAMP), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, UNIX_TIMESTAMP(s, 'yyyy-DDD') AS x FROM t;

-- title: an ORDER BY position past the SELECT list of a set operation
CREATE TABLE t (a INT, b INT);
CREATE VIEW v AS
  SELECT a FROM t UNION SELECT b FROM t ORDER BY 2 LIMIT 3;

-- title: an infix function is named by its keyword (RLIKE), not by the call around it (IF)
CREATE TABLE t (a INT, s STRING);
CREATE VIEW v AS
  SELECT a, IF(s RLIKE '^a', 1, 2) AS x FROM t;

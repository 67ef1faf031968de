-- title: GROUP BY -1 is a position outside the SELECT list, as Spark reads it, not a constant to group by
CREATE TABLE t (a INT, b INT);
CREATE VIEW v AS
  SELECT a, COUNT(*) AS n FROM t GROUP BY a, -1;

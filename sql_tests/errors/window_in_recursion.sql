-- title: a window function over the recursive relation is refused (not monotone)
CREATE TABLE e (a INT, b INT);
CREATE VIEW r AS WITH RECURSIVE p(a, b) AS (
  SELECT a, b FROM e
  UNION
  SELECT p.a, ROW_NUMBER() OVER (PARTITION BY p.a ORDER BY p.b) FROM p
) SELECT * FROM p;

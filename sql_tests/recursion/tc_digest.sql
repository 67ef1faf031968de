-- title: transitive closure of the seeds digest §2(d), with reflexive pairs
-- oracle: duckdb
CREATE TABLE e (x INT, y INT);
-- R(x, x) :- E(x, _).  R(x, x) :- E(_, x).  R(x, y) :- E(x, y).  R(x, y) :- E(x, z), R(z, y).
CREATE VIEW r AS
WITH RECURSIVE r(x, y) AS (
  SELECT x, x FROM e
  UNION SELECT y, y FROM e
  UNION SELECT x, y FROM e
  UNION SELECT e.x, r.y FROM e JOIN r ON e.y = r.x
)
SELECT x, y FROM r;
-- step
INSERT INTO e VALUES (1, 2), (2, 3);
-- step
INSERT INTO e VALUES (3, 4);
-- step
DELETE FROM e WHERE x = 2 AND y = 3;
-- step
INSERT INTO e VALUES (4, 1);

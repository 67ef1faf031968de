-- title: stratified negation: reachability that avoids blocked nodes (EXCEPT a lower stratum)
-- oracle: duckdb
CREATE TABLE e (src INT, dst INT);
CREATE TABLE blocked (n INT);
CREATE VIEW open_reach AS
WITH RECURSIVE r(n) AS (
  SELECT 0 FROM e WHERE src = 0
  UNION
  SELECT n FROM (SELECT e.dst AS n FROM r JOIN e ON r.n = e.src EXCEPT SELECT n FROM blocked) s
)
SELECT n FROM r;
-- step
INSERT INTO e VALUES (0, 1), (1, 2), (2, 3), (0, 4), (4, 3);
-- step
INSERT INTO blocked VALUES (2);
-- step
INSERT INTO blocked VALUES (4);
-- step
DELETE FROM blocked WHERE n = 2;
INSERT INTO e VALUES (3, 5);

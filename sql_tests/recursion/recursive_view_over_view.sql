-- title: a recursive view used by other views
-- oracle: duckdb
CREATE TABLE follows (who STRING, whom STRING);
CREATE VIEW reach AS
WITH RECURSIVE r(a, b) AS (
  SELECT who, whom FROM follows
  UNION
  SELECT r.a, f.whom FROM r JOIN follows f ON r.b = f.who
)
SELECT a, b FROM r;
CREATE VIEW reach_counts AS SELECT a, COUNT(*) AS n FROM reach WHERE a <> b GROUP BY a;
CREATE VIEW mutual AS SELECT r1.a, r1.b FROM reach r1 JOIN reach r2 ON r1.a = r2.b AND r1.b = r2.a WHERE r1.a < r1.b;
-- step
INSERT INTO follows VALUES ('ann', 'bob'), ('bob', 'cy'), ('cy', 'dee');
-- step
INSERT INTO follows VALUES ('dee', 'ann');
-- step
DELETE FROM follows WHERE who = 'bob';
-- step
INSERT INTO follows VALUES ('bob', 'ann'), ('ann', 'bob');

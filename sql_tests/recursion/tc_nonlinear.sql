-- title: transitive closure written as R ⋈ R (non-linear recursion)
-- oracle: networkx-reach
-- (DuckDB evaluates recursion on its working table only, which differs here)
CREATE TABLE edge (src INT, dst INT);
CREATE VIEW reach AS
WITH RECURSIVE r(a, b) AS (
  SELECT src, dst FROM edge
  UNION
  SELECT r1.a, r2.b FROM r r1 JOIN r r2 ON r1.b = r2.a
)
SELECT a, b FROM r;
-- step
INSERT INTO edge VALUES (1, 2), (2, 3), (3, 4), (4, 5);
-- step
DELETE FROM edge WHERE src = 3;
-- step
INSERT INTO edge VALUES (3, 1), (5, 6);
-- step
INSERT INTO edge VALUES (3, 4);
-- step
DELETE FROM edge WHERE src = 1 OR dst = 1;

-- title: an inner loop that must run past its first empty iteration (seeds digest §1.7)
-- oracle: duckdb
-- Step 4 inserts the edge (2, 3) whose pair was derived at depth 3 by step 3. The
-- correction happens at inner iteration 3, after iterations that are empty: a loop that
-- stops at the first empty iteration emits (2, 3) twice.
CREATE TABLE e (src INT, dst INT);
CREATE VIEW v AS
WITH RECURSIVE r(x, y) AS (
  SELECT src, dst FROM e
  UNION
  SELECT e.src, r.y FROM e JOIN r ON e.dst = r.x
)
SELECT x, y FROM r;
-- step
INSERT INTO e VALUES (2, 1), (1, 1);
-- step
INSERT INTO e VALUES (1, 0);
-- step
INSERT INTO e VALUES (0, 3), (1, 4);
-- step
INSERT INTO e VALUES (2, 3);
DELETE FROM e WHERE src = 1 AND dst = 1;

-- title: UNION ALL recursion counts paths in a DAG (bag semantics)
-- oracle: duckdb spark
CREATE TABLE dag (src INT, dst INT);
CREATE VIEW paths AS
WITH RECURSIVE p(node) AS (
  SELECT dst FROM dag WHERE src = 1
  UNION ALL
  SELECT d.dst FROM p JOIN dag d ON p.node = d.src
)
SELECT node, COUNT(*) AS ways FROM p GROUP BY node;
-- step
INSERT INTO dag VALUES (1, 2), (1, 3), (2, 4), (3, 4), (4, 5);
-- step
INSERT INTO dag VALUES (2, 3);
-- step
DELETE FROM dag WHERE src = 1 AND dst = 3;
-- step
INSERT INTO dag VALUES (5, 6), (4, 6);

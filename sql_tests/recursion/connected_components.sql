-- title: connected components by MIN label propagation; a deletion splits a component
-- oracle: duckdb
CREATE TABLE edges (src INT, dst INT);
CREATE VIEW undirected AS SELECT src, dst FROM edges UNION ALL SELECT dst, src FROM edges;
CREATE VIEW labels AS
WITH RECURSIVE lab(node, label) AS (
  SELECT src, src FROM undirected
  UNION
  SELECT u.dst, l.label FROM lab l JOIN undirected u ON l.node = u.src
)
SELECT node, label FROM lab;
CREATE VIEW components AS
SELECT node, MIN(label) AS component FROM labels GROUP BY node;
CREATE VIEW component_sizes AS
SELECT component, COUNT(*) AS size FROM components GROUP BY component;
-- step
INSERT INTO edges VALUES (1, 2), (2, 3), (4, 5), (6, 6);
-- step
INSERT INTO edges VALUES (3, 4);
-- step
DELETE FROM edges WHERE src = 2 AND dst = 3;
-- step
INSERT INTO edges VALUES (5, 1), (7, 6);
-- step
DELETE FROM edges WHERE src = 3 OR dst = 6;

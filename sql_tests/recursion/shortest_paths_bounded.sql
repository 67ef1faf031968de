-- title: single-source shortest paths with MIN; a deletion lengthens a path
-- oracle: duckdb
-- Path lengths are bounded, so the set of (node, length) pairs is finite on cyclic graphs.
CREATE TABLE roads (src INT, dst INT, km INT);
CREATE VIEW dist AS
WITH RECURSIVE p(node, d) AS (
  SELECT 0, 0 FROM roads WHERE src = 0
  UNION
  SELECT r.dst, p.d + r.km FROM p JOIN roads r ON p.node = r.src WHERE p.d + r.km <= 20
)
SELECT node, MIN(d) AS km FROM p GROUP BY node;
-- step
INSERT INTO roads VALUES (0, 1, 2), (1, 2, 2), (0, 2, 7), (2, 3, 1), (3, 0, 1);
-- step
DELETE FROM roads WHERE src = 1 AND dst = 2;
-- step
INSERT INTO roads VALUES (1, 3, 1);
-- step
UPDATE roads SET km = 1 WHERE src = 0 AND dst = 2;
-- step
DELETE FROM roads WHERE src = 0;

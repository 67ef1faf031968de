-- title: shortest paths with MIN inside the recursion (fixpoint semantics)
-- oracle: networkx-sssp
-- The step keeps one distance per node, so the Kleene iteration converges on cyclic
-- graphs; its fixpoint is each node's shortest distance from node 0 (via >= 1 road).
CREATE TABLE roads (src INT, dst INT, km INT);
CREATE VIEW best AS
WITH RECURSIVE sp(node, d) AS (
  SELECT 0, 0 FROM roads WHERE src = 0
  UNION
  SELECT r.dst, MIN(sp.d + r.km) FROM sp JOIN roads r ON sp.node = r.src GROUP BY r.dst
)
SELECT node, MIN(d) AS km FROM sp GROUP BY node;
-- step
INSERT INTO roads VALUES (0, 1, 4), (1, 2, 1), (0, 2, 9), (2, 3, 3), (3, 1, 1);
-- step
DELETE FROM roads WHERE src = 1 AND dst = 2;
-- step
INSERT INTO roads VALUES (0, 3, 2);
-- step
DELETE FROM roads WHERE src = 0 AND dst = 3;
INSERT INTO roads VALUES (1, 2, 1);

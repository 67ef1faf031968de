-- title: mutual recursion: nodes at even and odd distance from node 0
-- oracle: networkx-parity
-- (DuckDB evaluates recursion on its working table only, which differs here)
CREATE TABLE e (src INT, dst INT);
CREATE VIEW even_nodes AS
WITH RECURSIVE even(n) AS (
  SELECT 0 FROM e WHERE src = 0
  UNION
  SELECT e.dst FROM odd JOIN e ON odd.n = e.src
), odd(n) AS (
  SELECT e.dst FROM even JOIN e ON even.n = e.src
)
SELECT n FROM even;
CREATE VIEW odd_nodes AS
WITH RECURSIVE even(n) AS (
  SELECT 0 FROM e WHERE src = 0
  UNION
  SELECT e.dst FROM odd JOIN e ON odd.n = e.src
), odd(n) AS (
  SELECT e.dst FROM even JOIN e ON even.n = e.src
)
SELECT n FROM odd;
-- step
INSERT INTO e VALUES (0, 1), (1, 2), (2, 3);
-- step
INSERT INTO e VALUES (0, 3);
-- step
DELETE FROM e WHERE src = 1;
-- step
INSERT INTO e VALUES (3, 4), (4, 0);

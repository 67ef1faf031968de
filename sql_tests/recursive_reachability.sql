-- title: WITH RECURSIVE reachability (UNION, set semantics) over inserted and deleted edges
CREATE TABLE edges (src INT, dst INT);

CREATE VIEW reach AS
WITH RECURSIVE r AS (
  SELECT src, dst FROM edges
  UNION
  SELECT r.src, e.dst FROM r JOIN edges e ON r.dst = e.src
)
SELECT src, dst FROM r;

CREATE VIEW reach_count AS
WITH RECURSIVE r AS (
  SELECT src, dst FROM edges
  UNION
  SELECT r.src, e.dst FROM r JOIN edges e ON r.dst = e.src
)
SELECT src, COUNT(*) AS n FROM r GROUP BY src;

-- step
INSERT INTO edges VALUES (1, 2), (2, 3);
-- step
INSERT INTO edges VALUES (3, 1), (3, 4);
-- step
DELETE FROM edges WHERE src = 2;
-- step
INSERT INTO edges VALUES (2, 3), (2, 3);
-- step
DELETE FROM edges WHERE dst = 1;

-- title: a recursive CTE negating itself through EXCEPT has no least fixpoint and is refused
CREATE TABLE nodes (n INT);
CREATE VIEW odd AS
WITH RECURSIVE r AS (
  SELECT n FROM nodes WHERE n = 0
  UNION
  (SELECT n FROM nodes EXCEPT SELECT n + 1 FROM r)
)
SELECT n FROM r;

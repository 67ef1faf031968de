-- title: a recursive CTE that never converges fails fast at Spark's default limit, naming both ways to raise it
CREATE TABLE s (n INT);
CREATE VIEW c AS WITH RECURSIVE c(n) AS (SELECT n FROM s UNION ALL SELECT n + 1 FROM c) SELECT n FROM c;
-- step
INSERT INTO s VALUES (1);

-- title: a recursive CTE that reads itself under an outer join is refused (not stratified)
CREATE TABLE e (s INT, d INT);
CREATE VIEW r AS WITH RECURSIVE t(n) AS (SELECT s FROM e UNION SELECT e.d FROM t LEFT JOIN e ON t.n = e.s) SELECT n FROM t;

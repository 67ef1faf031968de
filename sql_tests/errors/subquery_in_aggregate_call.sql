-- title: a subquery inside an aggregate function's argument
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);
CREATE VIEW v AS SELECT g, SUM(x + (SELECT MAX(y) FROM u)) AS s FROM t GROUP BY g;

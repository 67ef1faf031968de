-- title: IN (subquery) inside an aggregate function's argument (where Spark is two-valued there is not settled)
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);
CREATE VIEW v AS SELECT g, COUNT_IF(x IN (SELECT y FROM u)) AS n FROM t GROUP BY g;

-- title: an aggregate of outer columns inside a subquery of a query without aggregation (SQL would make the outer query aggregate)
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);
CREATE VIEW v AS SELECT g, (SELECT MAX(t.x) FROM u) AS m FROM t;

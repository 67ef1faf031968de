-- title: a subquery in HAVING that reads an outer column neither grouped nor aggregated (Spark refuses it too)
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);
CREATE VIEW v AS SELECT g FROM t GROUP BY g HAVING EXISTS (SELECT 1 FROM u WHERE u.y = t.x);

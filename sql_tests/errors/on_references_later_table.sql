-- title: an ON clause cannot see a table joined after it (Spark: UNRESOLVED_COLUMN), even in an inner join
CREATE TABLE t (a INT, b INT);
CREATE TABLE u (c INT, d INT);
CREATE TABLE w (e INT, f INT);
CREATE VIEW v AS SELECT t.a FROM t JOIN u ON t.a = u.c AND e = 1 JOIN w ON w.f = t.b;

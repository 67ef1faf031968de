-- title: an unqualified column that two joined tables hold is ambiguous
CREATE TABLE t (a INT, b INT);
CREATE TABLE u (a INT, c INT);
CREATE VIEW v AS SELECT a FROM t JOIN u ON t.b = u.c;

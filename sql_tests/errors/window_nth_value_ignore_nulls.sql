-- title: NTH_VALUE's third argument true (skip NULLs) is refused by name, not ignored
CREATE TABLE t (x INT, y INT);
CREATE VIEW v AS SELECT NTH_VALUE(x, 2, true) OVER (ORDER BY y) AS p FROM t;

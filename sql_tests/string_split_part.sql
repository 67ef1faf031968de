-- title: split_part at its edges (negative and out-of-range parts, an empty delimiter, a delimiter that could overlap, NULLs), as Spark 4
-- oracle: spark (DuckDB's split_part differs: an empty delimiter splits into characters there)
CREATE TABLE t (id INT, s STRING, n INT);
CREATE VIEW parts AS SELECT id, split_part(s, ',', 2) AS p2, split_part(s, ',', -1) AS plast, split_part(s, ',', n) AS pn,
  split_part(s, '', n) AS pe, split_part(s, 'aa', 2) AS paa, split_part(s, ',', 9) AS pfar,
  CASE WHEN n = 0 THEN '-' ELSE split_part(s, ',', n) END AS guarded FROM t WHERE n <> 0 OR n IS NULL OR id = 0;
CREATE VIEW counts AS SELECT split_part(s, ',', 1) AS head, COUNT(*) AS c FROM t GROUP BY split_part(s, ',', 1);
-- step
INSERT INTO t VALUES (1, 'a,b,,c,', 2), (2, '', 1), (3, 'aaa', -2), (4, 'x😀,y😀', -1), (5, NULL, 1), (6, 'a,b', NULL), (7, ',', 1);
-- step
INSERT INTO t VALUES (8, 'a,z', -3), (9, 'aaaa,a', 1);
DELETE FROM t WHERE id IN (1, 7);
-- step
DELETE FROM t WHERE id = 8;
INSERT INTO t VALUES (10, 'a,b,c', 3);

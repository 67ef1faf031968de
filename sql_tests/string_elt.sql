-- title: elt picks the n-th string (numbers cast to strings, NULL for a NULL index), and only that one is evaluated, as Spark 4
-- oracle: spark (DuckDB has no elt)
CREATE TABLE t (id INT, n INT, a STRING, b STRING);
CREATE VIEW picked AS SELECT id, elt(n, a, b) AS ab, elt(n, a, b, 'third') AS abc, elt(2, a, id, 1.5) AS mixed,
  elt(n, a, cast(b AS INT)) AS lazy FROM t WHERE n BETWEEN 1 AND 2 OR n IS NULL;
CREATE VIEW by_pick AS SELECT elt(n, 'one', 'two', 'three') AS name, COUNT(*) AS c FROM t WHERE n BETWEEN 1 AND 3 GROUP BY 1;
-- step
INSERT INTO t VALUES (1, 1, 'x', 'not a number'), (2, 2, NULL, '7'), (3, NULL, 'x', 'y'), (4, 3, 'p', 'q'), (5, 1, 'é😀', NULL);
-- step
DELETE FROM t WHERE id IN (1, 4);
INSERT INTO t VALUES (6, 2, 'z', '-3'), (7, 3, 'r', 's');

-- title: listagg / string_agg(x, sep) WITHIN GROUP (ORDER BY x [DESC]): the group's strings in order, joined (',' by default), DISTINCT too, NULL for no string
-- oracle: spark (checked against Spark 4.3; DuckDB's string_agg takes its order another way)
CREATE TABLE t (id INT, g INT, s STRING);
CREATE VIEW la AS SELECT g, listagg(s, ', ') WITHIN GROUP (ORDER BY s) AS l, string_agg(s, '|') WITHIN GROUP (ORDER BY s DESC) AS sd,
  listagg(DISTINCT s) WITHIN GROUP (ORDER BY s) AS ld, COUNT(*) AS c FROM t GROUP BY g;
CREATE VIEW whole AS SELECT listagg(s, '-') WITHIN GROUP (ORDER BY s) AS l FROM t;
-- step
INSERT INTO t VALUES (1, 1, 'b'), (2, 1, 'a'), (3, 1, NULL), (4, 1, 'b'), (5, 2, NULL), (6, 3, 'Zed'), (7, 3, 'zed'), (8, 3, 'é'), (9, 3, '');
-- step
DELETE FROM t WHERE id IN (2, 9);
INSERT INTO t VALUES (10, 2, 'x'), (11, 1, 'c');
-- step
DELETE FROM t WHERE g = 1;

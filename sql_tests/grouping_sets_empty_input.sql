-- title: GROUPING SETS (()) alone is a global aggregate, one row even on empty input, while an empty set beside others gives no row then (Spark); checked as the table empties again
-- oracle: spark (DuckDB gives the empty set a row on empty input whatever the other sets)
CREATE TABLE t (k INT, x INT);
CREATE VIEW only_empty AS SELECT count(*) AS n, sum(x) AS s, grouping_id() AS gid FROM t GROUP BY GROUPING SETS (());
CREATE VIEW with_keys AS SELECT k, count(*) AS n, sum(x) AS s FROM t GROUP BY GROUPING SETS ((k), ());
CREATE VIEW rolled AS SELECT k, count(*) AS n FROM t GROUP BY ROLLUP (k);
CREATE VIEW having_empty AS SELECT count(*) AS n FROM t GROUP BY GROUPING SETS (()) HAVING count(*) = 0;
-- step
INSERT INTO t VALUES (1, 10), (1, 20), (2, NULL);
-- step
DELETE FROM t WHERE k = 1;
-- step
DELETE FROM t WHERE k = 2;
-- step
INSERT INTO t VALUES (3, 5);

-- title: collect_list/collect_set against Spark itself: sorted with sort_array (Spark leaves the order open), NULLs skipped, [] for a global aggregate over no rows, DECIMAL and STRING elements
CREATE TABLE t (g INT, x INT, s STRING, d DECIMAL(5,2));

CREATE VIEW lists AS SELECT g, sort_array(collect_list(x)) AS xs, sort_array(collect_set(x)) AS xset, sort_array(collect_list(s)) AS ss FROM t GROUP BY g;
CREATE VIEW decimals AS SELECT g, sort_array(collect_set(d)) AS ds, size(collect_list(d)) AS n FROM t GROUP BY g;
CREATE VIEW everything AS SELECT sort_array(collect_list(x)) AS xs, size(collect_set(s)) AS ns, COUNT(*) AS n FROM t;
CREATE VIEW contains AS SELECT g, array_contains(collect_set(x), 3) AS has3 FROM t GROUP BY g;

-- step
INSERT INTO t VALUES (1, 3, 'b', 1.50), (1, 1, 'a', 2.00), (1, 3, 'b', 1.50), (2, NULL, NULL, NULL), (NULL, 5, 'z', 0.25), (3, 3, 'c', NULL);
-- step
DELETE FROM t WHERE x = 1;
INSERT INTO t VALUES (2, 7, 'q', 9.99), (2, 7, 'q', 9.99);
-- step
UPDATE t SET x = 3 WHERE g = 2;
-- step
DELETE FROM t;

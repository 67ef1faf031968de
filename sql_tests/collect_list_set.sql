-- title: collect_list and collect_set as maintained multisets: NULLs skipped, [] for no values, arrays sorted ascending; SIZE, ARRAY_CONTAINS, SORT_ARRAY; views over arrays and an outer join carrying them
CREATE TABLE t (g INT, x INT, s STRING, d DECIMAL(5,2));
CREATE TABLE k (g INT);

CREATE VIEW lists AS SELECT g, collect_list(x) AS xs, collect_set(x) AS xset, collect_list(s) AS ss FROM t GROUP BY g;
CREATE VIEW distinct_filtered AS SELECT g, collect_list(DISTINCT s) AS ds, collect_set(d) FILTER (WHERE x > 1) AS big, array_agg(d) AS ad FROM t GROUP BY g;
CREATE VIEW everything AS SELECT collect_list(x) AS xs, collect_set(s) AS ss, COUNT(*) AS n FROM t;
CREATE VIEW sizes AS SELECT g, SIZE(collect_list(x)) AS n, array_size(collect_set(x)) AS nd, array_contains(collect_set(x), 3) AS has3, sort_array(collect_set(s), false) AS desc_s FROM t GROUP BY g;
CREATE VIEW with_three AS SELECT g, xs, SIZE(xset) AS nd FROM lists WHERE array_contains(xs, 3) OR xs IS NULL;
CREATE VIEW padded AS SELECT k.g AS kg, lists.g, lists.xset FROM k FULL JOIN lists ON k.g = lists.g;
CREATE VIEW top2 AS SELECT g, xs, ss FROM lists ORDER BY g DESC LIMIT 2;
CREATE VIEW numbered AS SELECT g, xset, ROW_NUMBER() OVER (ORDER BY g) AS rn FROM lists;
CREATE VIEW per_key AS SELECT k.g, collect_list(t.s) AS ss FROM k JOIN t ON k.g = t.g GROUP BY k.g;

-- step
INSERT INTO t VALUES (1, 3, 'b', 1.50), (1, 1, 'a', 2.00), (1, 3, 'b', 1.50), (2, NULL, NULL, NULL), (NULL, 5, 'z', 0.25), (3, 3, 'c', NULL);
INSERT INTO k VALUES (1), (4);
-- step
DELETE FROM t WHERE x = 1;
INSERT INTO t VALUES (2, 7, 'q', 9.99), (2, 7, 'q', 9.99);
-- step
DELETE FROM t WHERE g = 1;
INSERT INTO k VALUES (2), (2);
-- step
UPDATE t SET x = 3 WHERE g = 2;
INSERT INTO t VALUES (4, NULL, 'n', NULL);
-- step
DELETE FROM t;

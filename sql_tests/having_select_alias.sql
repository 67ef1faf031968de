-- title: HAVING names a SELECT alias, even one shadowing an ungrouped column; a grouping column wins over an alias
CREATE TABLE tab0 (col0 INT, col1 INT, col2 INT);
CREATE VIEW shadow AS SELECT 41 AS col0 FROM tab0 GROUP BY col2 HAVING col0 > 40;
CREATE VIEW shadow_null AS SELECT 41 AS col0 FROM tab0 GROUP BY col2 HAVING col0 NOT BETWEEN NULL AND NULL;
CREATE VIEW agg_alias AS SELECT col2, count(*) AS col0, sum(col1) AS s FROM tab0 GROUP BY col2 HAVING col0 > 1 AND s + col2 > 4;
CREATE VIEW key_wins AS SELECT col2 + 1 AS col2, count(*) AS n FROM tab0 GROUP BY col2 HAVING col2 > 1;
CREATE VIEW key_alias AS SELECT col2 AS k, max(col0) AS m FROM tab0 GROUP BY col2 HAVING k > 1 OR m IS NULL;
-- step
INSERT INTO tab0 VALUES (1, 2, 3), (1, 2, 1), (4, 5, 1), (NULL, 7, 9);
-- step
DELETE FROM tab0 WHERE col0 = 4;
INSERT INTO tab0 VALUES (5, 1, 3), (6, 6, 0);
-- step
DELETE FROM tab0 WHERE col2 = 3;

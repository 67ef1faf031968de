-- title: GROUP BY expressions (not just columns), selected by the same expression
CREATE TABLE t (id INT, name STRING, score INT);

CREATE VIEW by_initial AS SELECT upper(substring(name, 1, 1)) AS initial, COUNT(*) AS n FROM t GROUP BY upper(substring(name, 1, 1));
CREATE VIEW by_bucket AS SELECT score div 10 AS bucket, SUM(score) AS total FROM t GROUP BY score div 10;

-- step
INSERT INTO t VALUES (1, 'amy', 15), (2, 'Alan', 17), (3, 'bea', 23);
-- step
INSERT INTO t VALUES (4, 'Bo', 29), (5, NULL, NULL);
-- step
UPDATE t SET score = score + 5 WHERE score IS NOT NULL;
-- step
DELETE FROM t WHERE name LIKE 'a%';

-- title: SELECT without FROM is a constant view: its row appears at the first step only
CREATE TABLE t (a INT);
CREATE VIEW k AS SELECT 1 AS one, 'x' AS s, 7 / 2 AS half, CAST(NULL AS INT) AS nothing;
CREATE VIEW none AS SELECT 1 AS one WHERE 1 = 0;
CREATE VIEW mixed AS SELECT a FROM t UNION ALL SELECT 42;
-- step
INSERT INTO t VALUES (1);
-- step
INSERT INTO t VALUES (2);
DELETE FROM t WHERE a = 1;

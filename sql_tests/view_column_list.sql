-- title: a view with a column list is named by its name
CREATE TABLE t (a INT, b STRING);
CREATE VIEW renamed (x, y) AS SELECT a, b FROM t WHERE a > 1;
CREATE VIEW from_renamed AS SELECT y FROM renamed WHERE x < 10;
-- step
INSERT INTO t VALUES (1, 'one'), (2, 'two'), (20, 'twenty');
-- step
DELETE FROM t WHERE a = 2;

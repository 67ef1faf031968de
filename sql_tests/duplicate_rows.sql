-- title: tables are bags: the same row inserted twice, then one copy deleted
CREATE TABLE t (a INT, b STRING);
CREATE TABLE u (a INT);

CREATE VIEW copy AS SELECT a, b FROM t;
CREATE VIEW counts AS SELECT b, COUNT(*) AS n FROM t GROUP BY b;
CREATE VIEW joined AS SELECT t.b FROM t JOIN u ON t.a = u.a;
CREATE VIEW uniq AS SELECT DISTINCT b FROM t;

-- step
INSERT INTO t VALUES (1, 'x'), (1, 'x');
INSERT INTO u VALUES (1), (1);
-- step
INSERT INTO t VALUES (1, 'x');
-- step
DELETE FROM t WHERE a = 1;
INSERT INTO t VALUES (1, 'x'), (1, 'x');
-- step
DELETE FROM u WHERE a = 1;
INSERT INTO u VALUES (1);
-- step
DELETE FROM t WHERE a = 1;
INSERT INTO t VALUES (1, 'x');
-- step
DELETE FROM t;

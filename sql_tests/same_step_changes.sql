-- title: statements of one step form one batch: later DELETE sees earlier INSERTs, net-zero changes vanish
CREATE TABLE t (k INT, v STRING);

CREATE VIEW all_rows AS SELECT k, v FROM t;
CREATE VIEW n AS SELECT COUNT(*) AS n FROM t;

-- step
INSERT INTO t VALUES (1, 'a'), (2, 'b');
DELETE FROM t WHERE k = 2;
-- step
INSERT INTO t VALUES (3, 'c');
UPDATE t SET v = 'cc' WHERE k = 3;
UPDATE t SET v = 'aa' WHERE k = 1;
UPDATE t SET v = 'a' WHERE k = 1;
-- step
DELETE FROM t WHERE k = 3;
INSERT INTO t VALUES (3, 'cc');
-- step
DELETE FROM t;
INSERT INTO t VALUES (1, 'a');

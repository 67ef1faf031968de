-- title: DOUBLE division by a literal is correctly rounded in every batch
CREATE TABLE t (id INT, x INT);
CREATE VIEW v AS SELECT id, x / 3 AS q FROM t;
-- step
INSERT INTO t VALUES (1, 7), (2, -7);
-- step
UPDATE t SET x = x + 1;

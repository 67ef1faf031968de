-- title: DECIMAL / integer literal has Spark's scale: the literal 3 is DECIMAL(1,0), so d / 3 is DECIMAL(9,6)
CREATE TABLE t (id INT, d DECIMAL(6,3));
CREATE VIEW v AS SELECT id, d / 3 AS q FROM t;
-- step
INSERT INTO t VALUES (1, 1.250), (2, 2.345);

-- title: SUM/AVG of DOUBLE and FLOAT stay equal to recomputation after a large value comes and goes
CREATE TABLE t (y DOUBLE, f FLOAT);
CREATE VIEW s AS SELECT SUM(y) AS sy, AVG(y) AS ay, SUM(f) AS sf FROM t;
-- step
INSERT INTO t VALUES (0.2, 0.2), (0.3, 0.3);
-- step
INSERT INTO t VALUES (1e17, 1e10);
-- step
DELETE FROM t WHERE y > 1e16;

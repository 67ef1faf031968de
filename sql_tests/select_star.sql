-- title: SELECT *, t.*, and a view reading another view's star
CREATE TABLE t (a INT, b STRING);
CREATE TABLE u (c INT, d STRING);

CREATE VIEW everything AS SELECT * FROM t;
CREATE VIEW pairs AS SELECT t.*, u.d FROM t JOIN u ON t.a = u.c;
CREATE VIEW starred AS SELECT * FROM t WHERE a > 1;
CREATE VIEW from_starred AS SELECT b FROM starred WHERE a < 10;

-- step
INSERT INTO t VALUES (1, 'one'), (2, 'two');
INSERT INTO u VALUES (2, 'deux');
-- step
INSERT INTO t VALUES (3, 'three'), (20, 'twenty');
-- step
DELETE FROM t WHERE a = 2;

-- title: a line reading `-- step` inside a string literal is data, not a step marker
CREATE TABLE t (a INT, s STRING);
CREATE VIEW v AS SELECT a, length(s) AS n, s FROM t;
-- step
INSERT INTO t VALUES (1, 'first
-- step
still the same string');
/* a comment
-- step
is not a marker either */
INSERT INTO t VALUES (2, 'x');
-- step
DELETE FROM t WHERE a = 1;

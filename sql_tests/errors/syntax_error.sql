-- title: a syntax error is reported at its position
CREATE TABLE t (a INT, b STRING);
CREATE VIEW v AS SELECT a FROM t WHERE (a > 1;

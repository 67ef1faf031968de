-- title: an unknown column is reported at the start of its name
CREATE TABLE t (a INT, b STRING);
CREATE VIEW v AS
SELECT a, b
FROM t
WHERE nope > 1;

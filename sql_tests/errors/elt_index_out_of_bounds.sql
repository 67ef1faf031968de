-- title: elt's index outside its strings rejects the step at run time, as Spark's ANSI mode raises INVALID_ARRAY_INDEX
CREATE TABLE t (n INT, s STRING);
CREATE VIEW v AS SELECT elt(n, s, 'b') AS x FROM t;
-- step
INSERT INTO t VALUES (1, 'a'), (NULL, 'c');
-- step
INSERT INTO t VALUES (3, 'a');

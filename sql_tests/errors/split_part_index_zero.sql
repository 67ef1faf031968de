-- title: split_part's part 0 rejects the step at run time, as Spark raises INVALID_INDEX_OF_ZERO (a NULL string does not)
CREATE TABLE t (s STRING, n INT);
CREATE VIEW v AS SELECT split_part(s, ',', n) AS x FROM t;
-- step
INSERT INTO t VALUES ('a,b', 2), (NULL, 0);
-- step
INSERT INTO t VALUES ('a,b', 0);

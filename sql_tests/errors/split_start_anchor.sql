-- title: SPLIT with a pattern anchored by '^' is refused
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT split(s, '^a|,') AS x FROM t;

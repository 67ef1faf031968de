-- title: TRANSLATE needs constant characters
CREATE TABLE t (s STRING, f STRING);
CREATE VIEW v AS SELECT translate(s, f, 'x') AS x FROM t;

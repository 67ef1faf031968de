-- title: REGEXP_REPLACE needs a constant pattern
CREATE TABLE t (s STRING, p STRING);
CREATE VIEW v AS SELECT regexp_replace(s, p, 'x') AS x FROM t;

-- title: REGEXP_REPLACE with a pattern that can match the empty string is refused (Java places empty matches differently)
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT regexp_replace(s, 'a*', '-') AS x FROM t;

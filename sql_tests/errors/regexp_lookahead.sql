-- title: a regular expression the runtime cannot run (look-ahead) is refused at compile time
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT regexp_extract(s, 'a(?=b)', 0) AS x FROM t;

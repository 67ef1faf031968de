-- title: REGEXP_REPLACE's position starts at 1 (Spark: VALUE_OUT_OF_RANGE)
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT regexp_replace(s, 'a', 'x', 0) AS x FROM t;

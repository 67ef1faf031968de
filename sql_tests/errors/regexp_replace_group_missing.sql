-- title: a REGEXP_REPLACE replacement naming a group the pattern lacks is refused (Java raises on the first match)
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT regexp_replace(s, '(a)b', '$2') AS x FROM t;

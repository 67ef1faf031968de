-- title: a to_date pattern outside the subset dbspc parses exactly as Spark is refused
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT to_date(s, 'yyyy-DDD') AS d FROM t;

-- title: SUBSTRING_INDEX with a delimiter that can overlap itself is refused (Spark counts overlapping occurrences)
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT substring_index(s, 'aa', 2) AS x FROM t;

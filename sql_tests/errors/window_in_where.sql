-- title: window functions are evaluated after WHERE and cannot appear in it (use QUALIFY)
CREATE TABLE t (g STRING, x INT);
CREATE VIEW v AS SELECT g, x FROM t WHERE ROW_NUMBER() OVER (ORDER BY x) = 1;

-- title: lpad/rpad, instr/locate, concat_ws, regexp_extract, initcap, reverse, repeat as Spark 4
-- oracle: spark (DuckDB's initcap takes upper case, not title case: 'ß' is 'ẞ', Spark's 'Ss')
CREATE TABLE t (s STRING, n INT);
CREATE VIEW pads AS SELECT s, lpad(s, 5, 'xy') AS a, rpad(s, 6, 'xy') AS b, lpad(s, 2) AS c, rpad(s, 0, 'x') AS z FROM t;
CREATE VIEW finds AS SELECT s, instr(s, 'l') AS i, instr(s, '') AS e, locate('l', s, 4) AS lo, locate('o', s) AS lo1 FROM t;
CREATE VIEW joins AS SELECT s, concat_ws(',', s, NULL, 'z') AS cw, concat_ws('-', s, s) AS cw2 FROM t;
CREATE VIEW misc AS SELECT s, regexp_extract(s, '([a-z]+)([0-9]+)', 2) AS re, initcap(s) AS ic, reverse(s) AS rv, repeat(s, n) AS rp FROM t;
-- step
INSERT INTO t VALUES ('hello wORLD', 1), ('foo123bar', 2), (NULL, NULL), ('', 3), ('lol', -1);
-- step
DELETE FROM t WHERE n = 1;
INSERT INTO t VALUES ('ab cD eF', 0), ('ß straße ǆemal ﬁne', 1);

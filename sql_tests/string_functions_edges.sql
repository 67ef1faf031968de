-- title: string functions at their edges (empty patterns and pads, negative and zero positions, limits, missing groups), and Spark's two-argument replace, as Spark 4
-- oracle: spark (DuckDB's split, substring_index, locate and replace differ at these edges)
CREATE TABLE t (id INT, s STRING, n INT);
CREATE VIEW strs AS SELECT id, split(s, '[.|]', 2) AS sp, split(s, '') AS sp0, regexp_extract(s, 'z(\\d+)', 1) AS rx, substring_index(s, '.', -n) AS si,
  lpad(s, 5, '') AS lp0, repeat(s, n) AS rp, concat(s, NULL) AS cn, ascii('') AS a0, chr(n - 2) AS ch, instr(s, '') AS i0,
  locate('a', s, 0) AS l0, left(s, -1) AS lneg, replace(s, 'a') AS r1, replace(s, '') AS r0, translate(s, 'abc', 'x') AS tr, trim(BOTH 'ab' FROM s) AS tb,
  rtrim(s, 'x') AS rt, substring(s, 0) AS s0, substring(s, -100, 3) AS sneg, reverse(s) AS rv, upper(s) AS up FROM t;
-- step
INSERT INTO t VALUES (1, 'a.b|c.d', 2), (2, 'abcabc', -1), (3, '', 0), (4, 'xxaxx', 1), (5, 'z12z34', 3), (6, NULL, NULL), (7, 'ba.ab', 300);

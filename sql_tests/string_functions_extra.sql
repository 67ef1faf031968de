-- title: regexp_replace, split, substring_index, translate, startswith/endswith/contains, ascii/chr, btrim, TRIM(... FROM s), octet_length/bit_length, space, nvl2, isnull/isnotnull, ILIKE as Spark 4
-- oracle: spark (Java's regex and replacement syntax, code-point positions, chr of n mod 256)
CREATE TABLE t (s STRING, p STRING, n INT);
CREATE VIEW regex AS SELECT s, regexp_replace(s, '([a-z])([0-9]+)', '$2$1') AS swapped, regexp_replace(s, 'é|😀', '\\$') AS dollars,
  regexp_replace(s, '[aeiouy]', '_', 3) AS from3, regexp_replace(s, '^.', '#', 2) AS anchored, regexp_replace(s, '.', '*') AS dots,
  regexp_replace(s, '([a-z])([0-9])', '$21$10') AS digits FROM t;
CREATE VIEW parts AS SELECT s, n, substring_index(s, ',', n) AS si, substring_index(s, ',', -2) AS si2, substring_index(s, '😀', 1) AS si3,
  substring_index(s, '', 1) AS si4, translate(s, 'aé,a', 'Ae') AS tr, translate(s, 'abc😀', '') AS del FROM t;
CREATE VIEW preds AS SELECT s, p, startswith(s, p) AS sw, endswith(s, p) AS ew, contains(s, p) AS co, startswith(s, 'a') AS sa,
  s ILIKE 'a%é' AS il, s NOT ILIKE '%B%' AS nil, isnull(p) AS pn, isnotnull(s) AS snn, nvl2(p, n, 0.5) AS nv, nvl2(s, s, p) AS nvs FROM t;
CREATE VIEW codes AS SELECT s, n, ascii(s) AS a, chr(n) AS c, char(n + 200) AS c2, btrim(s) AS b, btrim(s, ' a') AS b2, btrim(s, p) AS b3,
  octet_length(s) AS ol, bit_length(s) AS bl, concat('[', space(n % 4), ']') AS sp, length(space(n)) AS spl FROM t;
CREATE VIEW splits AS SELECT s, split(s, ',') AS parts, split(s, '', 2) AS chars, split(s, '[0-9]+', 2) AS nums,
  split(s, '😀|é') AS emoji, size(split(s, ',')) AS n_parts, array_contains(split(s, ','), 'c') AS has_c FROM t;
CREATE VIEW null_args AS SELECT s, split(s, ',', NULL) AS a, split(s, NULL) AS b, isnull(split(s, ',')) AS c, regexp_replace(s, NULL, 'x') AS d,
  regexp_replace(s, 'a', NULL) AS e, substring_index(s, NULL, 1) AS g, translate(s, NULL, 'a') AS h, btrim(s, NULL) AS i,
  contains(s, NULL) AS j, s ILIKE NULL AS k, nvl2(NULL, 1, 2) AS l, chr(NULL) AS m, ascii(NULL) AS n, space(NULL) AS o FROM t;
CREATE VIEW trims AS SELECT s, p, trim(BOTH 'a😀 ' FROM s) AS tb, trim(LEADING 'a😀 ' FROM s) AS tl, trim(TRAILING p FROM s) AS tt,
  trim('é' FROM s) AS tf, ltrim('a ', s) AS lt, rtrim('😀,', s) AS rt, trim(p, s) AS tp, trim(LEADING FROM s) AS ls FROM t;
CREATE VIEW heads AS SELECT substring_index(s, ',', 1) AS head, count(*) AS c FROM t GROUP BY substring_index(s, ',', 1);
-- step
INSERT INTO t VALUES ('a1,b22,c', 'a', 2), ('é😀é,😀', 'é', -1), ('', '', 0), (NULL, 'x', 1), ('  abc  ', NULL, NULL);
INSERT INTO t VALUES ('AbcÉ', 'bc', 65), ('x9y,a1', 'y', 321), ('a😀é', 'a😀', 3);
-- step
DELETE FROM t WHERE n = 2;
INSERT INTO t VALUES ('a,b,c,d', ',', -3), ('😀', '😀', 0), ('a1,q', 'q', 256);
-- step
DELETE FROM t WHERE s IS NULL OR s = '' OR n = 321;

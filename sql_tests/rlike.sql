-- title: RLIKE / REGEXP / regexp_like with Java's meanings: `.` and `$` around line terminators, ASCII \d \w \s
-- oracle: spark (DuckDB's RE2 differs on `.`, `$` and the classes)
CREATE TABLE t (k INT, s STRING);
CREATE VIEW v AS
  SELECT k,
         s RLIKE '^a.c$' AS dot_end,
         s RLIKE '\\d+' AS digits,
         s REGEXP 'b|x' AS alt,
         regexp_like(s, '[A-Z]') AS upper_class,
         NOT s RLIKE 'c' AS no_c,
         s RLIKE '^\\w+\\s[\\w-]*$' AS words,
         s RLIKE '(?<lead>a)\\.' AS named_dot,
         regexp_extract(s, '(a)(.)', 2) AS after_a
  FROM t;
CREATE VIEW matching AS SELECT k FROM t WHERE s RLIKE 'a{2,}|^x' ;
-- step
INSERT INTO t VALUES (1, 'abc'), (2, 'abc\n'), (3, 'a\nc'), (4, 'x12'), (5, NULL), (6, 'ABC'), (7, 'a\u2028c'),
  (8, 'aa b-c'), (9, 'a.'), (10, 'é1 x'), (11, 'abc\r\n');
-- step
DELETE FROM t WHERE k IN (1, 4);
INSERT INTO t VALUES (12, 'xaa'), (13, 'abc\r');

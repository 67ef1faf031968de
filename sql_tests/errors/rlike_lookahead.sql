-- title: a regular expression the runtime cannot match exactly as Java does is refused, with the reason
CREATE TABLE t (k INT, s STRING);
CREATE VIEW v AS
  SELECT k FROM t WHERE s RLIKE 'a(?=b)';

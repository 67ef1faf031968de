-- title: an unsupported function is named as written (INSTR), not by sqlglot's class
CREATE TABLE t (s STRING, d DATE);
CREATE VIEW v AS
  SELECT s, INSTR(s, 'a') AS x FROM t;

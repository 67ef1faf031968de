-- title: a type error names the function as written (DATE_SUB), not sqlglot's TS_OR_DS_ADD
CREATE TABLE t (d DATE, n BIGINT);
CREATE VIEW v AS
  SELECT date_sub(d, n) AS e FROM t;

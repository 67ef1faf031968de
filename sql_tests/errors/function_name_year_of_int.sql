-- title: YEAR of an INT names YEAR, not the TO_DATE sqlglot wraps around its argument
CREATE TABLE t (d DATE, n INT);
CREATE VIEW v AS
  SELECT year(n) AS y FROM t;

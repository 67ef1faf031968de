-- title: IN after LIKE needs parentheses in Spark SQL (sqlglot would read it as (s LIKE 'a%') IN (false))
CREATE TABLE t (k INT, s STRING);
CREATE VIEW v AS
  SELECT k FROM t WHERE s LIKE 'a%' IN (false);

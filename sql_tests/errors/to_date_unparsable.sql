-- title: to_date of a text its pattern does not read rejects the step (Spark ANSI: CANNOT_PARSE_TIMESTAMP), but not where CASE skips it or try_to_date reads it
CREATE TABLE t (s STRING);
CREATE VIEW v AS SELECT CASE WHEN s LIKE '__/__/____' THEN to_date(s, 'dd/MM/yyyy') END AS d, try_to_date(s, 'dd/MM/yyyy') AS t FROM t;
CREATE VIEW w AS SELECT to_date(s, 'dd/MM/yyyy') AS d FROM t;
-- step
INSERT INTO t VALUES ('29/02/2024'), ('2024-02-29'), (NULL);

-- title: a STRING beside an integer becomes BIGINT, exactly (Spark 4 ANSI); beside a DECIMAL or DOUBLE, DOUBLE
-- oracle: spark (DuckDB has no implicit VARCHAR-to-number conversion)
CREATE TABLE u (s STRING, i INT, j BIGINT, d DECIMAL(4,1));
CREATE VIEW eq AS SELECT s, j FROM u WHERE s = 9007199254740993;
CREATE VIEW arith AS SELECT s, i + s AS p, s * 2 AS m, s - j AS sj, s + d AS sd FROM u;
CREATE VIEW un AS SELECT i AS x FROM u UNION ALL SELECT s FROM u;
CREATE VIEW cmp AS SELECT s, s < 10 AS lt, s IN (12, 13) AS inn, coalesce(s, i) AS c,
  CASE WHEN j > 2 THEN s ELSE i END AS k, s BETWEEN 5 AND 12 AS btw FROM u;
CREATE VIEW grouped AS SELECT s + 0 AS n, count(*) AS c FROM u GROUP BY s + 0;
-- step
INSERT INTO u VALUES ('9007199254740992', 9, 1, 1.5), ('9007199254740993', 13, 2, 2.5), ('12', 1, 3, 0.5),
  (' 7 ', 3, 5, NULL), (NULL, 4, 6, 1.0), ('-0', 5, 7, -1.5);
-- step
DELETE FROM u WHERE j = 2;
INSERT INTO u VALUES ('+12', 2, 8, 3.0);

-- title: where two decimal types meet past 38 digits, the common type keeps the integral digits and rounds the fraction, as Spark 4 does
-- oracle: spark (DuckDB widens such decimals by other rules)
CREATE TABLE w (id INT, big DECIMAL(38, 0), rate DECIMAL(38, 18), cents DECIMAL(38, 2), small DECIMAL(3, 2), PRIMARY KEY (id));
-- DECIMAL(38,0) beside DECIMAL(38,18) is DECIMAL(38,0): 1.5 compares, unions and joins as 2
CREATE VIEW compared AS SELECT id, big = rate AS eq, big > rate AS gt, big IN (rate, small) AS isin,
  big <=> rate AS nulleq, rate BETWEEN big AND big + 1 AS btw, nullif(big, rate) AS nif FROM w;
CREATE VIEW widened AS SELECT id, coalesce(rate, big) AS co, greatest(big, rate) AS gr,
  CASE WHEN id > 2 THEN rate ELSE big END AS cs, CASE WHEN id > 2 THEN cents ELSE rate END AS cr FROM w;
CREATE VIEW unioned AS SELECT big AS x FROM w UNION ALL SELECT rate FROM w UNION ALL SELECT small FROM w;
CREATE VIEW set_ops AS SELECT big FROM w INTERSECT SELECT rate FROM w;
CREATE VIEW joined AS SELECT a.id AS left_id, b.id AS right_id FROM w a JOIN w b ON a.big = b.rate;
CREATE VIEW grouped AS SELECT x, count(*) AS n FROM (SELECT cents AS x FROM w UNION ALL SELECT rate FROM w) GROUP BY x;
-- step
INSERT INTO w VALUES (1, 2, 1.5, 2.00, 1.25), (2, 3, 2.4999999999, 2.50, -1.25), (3, -2, -1.5, -1.99, 0.50),
  (4, 7, 7.000000000000000001, 7.00, 9.99), (5, NULL, 0.5, NULL, NULL);
-- step
DELETE FROM w WHERE id = 1;
INSERT INTO w VALUES (6, 99999999999999999999999999999999999999, 1.005, 1.01, 1.00);

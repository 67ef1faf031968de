-- title: a scalar subquery that returns two rows rejects the step (Spark: SCALAR_SUBQUERY_TOO_MANY_ROWS)
CREATE TABLE a (k INT);
CREATE TABLE b (k INT, v INT);
CREATE VIEW v AS SELECT a.k, (SELECT b.v FROM b WHERE b.k = a.k) AS bv FROM a;
-- step
INSERT INTO a VALUES (1), (2);
INSERT INTO b VALUES (1, 10);
-- step
INSERT INTO b VALUES (1, 11);

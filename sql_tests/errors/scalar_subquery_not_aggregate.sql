-- title: a correlated scalar subquery that could return several rows is refused
CREATE TABLE a (k INT);
CREATE TABLE b (k INT, v INT);
CREATE VIEW v AS SELECT a.k, (SELECT b.v FROM b WHERE b.k = a.k) AS bv FROM a;

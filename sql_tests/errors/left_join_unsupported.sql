-- title: LEFT JOIN is not supported yet
CREATE TABLE a (k INT);
CREATE TABLE b (k INT);
CREATE VIEW v AS SELECT a.k FROM a LEFT JOIN b ON a.k = b.k;

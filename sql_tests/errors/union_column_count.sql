-- title: UNION inputs with different numbers of columns
CREATE TABLE a (x INT, y INT);
CREATE TABLE b (x INT);
CREATE VIEW v AS SELECT x, y FROM a UNION ALL SELECT x FROM b;

-- title: LIMIT without ORDER BY keeps arbitrary rows: refused
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t LIMIT 10;

-- title: two unaliased items Spark names alike (Spark: COLUMN_ALREADY_EXISTS)
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT sum(a), SUM(a) FROM t;

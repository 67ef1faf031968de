-- title: a GLOBAL TEMPORARY view lives in Spark's global_temp database
CREATE TABLE t (a INT);
CREATE GLOBAL TEMPORARY VIEW v AS SELECT a FROM t;

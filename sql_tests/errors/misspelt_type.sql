-- title: a misspelt column type is named, not reported as a missing parenthesis
CREATE TABLE t (a INTT, b STRING);
CREATE VIEW v AS SELECT a FROM t;

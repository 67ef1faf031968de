-- title: CREATE TABLE inside a step is refused as a statement, not as an unknown table
CREATE TABLE t (a INT);
CREATE VIEW v AS SELECT a FROM t;
-- step
CREATE TABLE w (a INT);

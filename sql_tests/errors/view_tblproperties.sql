-- title: a view's TBLPROPERTIES are refused, not dropped
CREATE TABLE t (a INT);
CREATE VIEW v TBLPROPERTIES ('delta.appendOnly' = 'true') AS SELECT a FROM t;

-- title: PIVOT is refused with a rewrite hint, not a confusing column error
CREATE TABLE t (id INT, g STRING, x INT);
CREATE VIEW v AS SELECT * FROM t PIVOT (SUM(x) FOR g IN ('a', 'b'));

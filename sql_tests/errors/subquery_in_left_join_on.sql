-- title: a subquery in the ON of an outer join (it cannot move to WHERE)
CREATE TABLE t (g INT, x INT);
CREATE TABLE u (g INT, y INT);
CREATE VIEW v AS SELECT t.g, u.y FROM t LEFT JOIN u ON t.g = u.g AND u.y IN (SELECT x FROM t);

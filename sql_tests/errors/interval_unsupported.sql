-- title: an INTERVAL value is refused at its position
CREATE TABLE t (a INT, d DATE);
CREATE VIEW v AS SELECT a, d + INTERVAL 1 DAY AS e FROM t;

-- title: an INTERVAL value on its own is refused at its position
CREATE TABLE t (a INT, d DATE);
CREATE VIEW v AS SELECT a, INTERVAL 1 DAY AS e FROM t;

-- title: a bitwise operator on a DECIMAL is refused as Spark refuses it (integer operands only)
CREATE TABLE t (x INT, d DECIMAL(10, 2));
CREATE VIEW v AS SELECT x | d AS m FROM t;

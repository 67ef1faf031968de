-- title: listagg without WITHIN GROUP (ORDER BY the aggregated value) joins in an order Spark leaves open, and is refused
CREATE TABLE t (g INT, s STRING);
CREATE VIEW v AS SELECT g, listagg(s, ',') AS l FROM t GROUP BY g;

-- title: a DOUBLE or STRING becomes a DECIMAL through its decimal digits, rounded half up, as Spark does
-- oracle: spark (a DOUBLE's shortest decimal string: 2.675 is 2.675, not the binary 2.67499…)
CREATE TABLE t (id INT, x DOUBLE, s STRING, PRIMARY KEY (id));
CREATE VIEW from_double AS SELECT id, CAST(x AS DECIMAL(10, 2)) AS cents, CAST(x AS DECIMAL(38, 0)) AS whole,
  CAST(x AS DECIMAL(38, 37)) AS fine, TRY_CAST(x AS DECIMAL(5, 1)) AS narrow FROM t;
CREATE VIEW from_string AS SELECT id, TRY_CAST(s AS DECIMAL(38, 0)) AS whole, TRY_CAST(s AS DECIMAL(38, 2)) AS cents,
  TRY_CAST(s AS DECIMAL(10, 3)) AS milli FROM t;
-- step
INSERT INTO t VALUES (1, 2.675, '2.5'), (2, -2.675, '-2.665'), (3, 1.005, '3.5'), (4, 0.285, '1e-2'), (5, 1e-5, ' 7.4995 '),
  (6, 9.5, '12345678901234567890123456789012345.125'), (7, NULL, NULL), (8, -0.0, 'abc');
-- step
DELETE FROM t WHERE id IN (1, 2);
INSERT INTO t VALUES (9, 9.95, '0.0045'), (10, 0.05, '-0.0005');

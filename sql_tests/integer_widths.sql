-- title: TINYINT, SMALLINT, INT and BIGINT columns mixed in arithmetic, joins and sums
CREATE TABLE small (k TINYINT, s SMALLINT);
CREATE TABLE big (k BIGINT, v BIGINT);

CREATE VIEW widened AS SELECT small.k, s + v AS total, s * 2 AS doubled FROM small JOIN big ON small.k = big.k;
CREATE VIEW sums AS SELECT SUM(s) AS ss, SUM(k) AS sk, MAX(s) AS ms FROM small;

-- step
INSERT INTO small VALUES (1, 1000), (2, -2000), (3, 3200);
INSERT INTO big VALUES (1, 5000000000), (3, -1);
-- step
INSERT INTO big VALUES (2, 7);
-- step
UPDATE small SET s = s div 2;
-- step
DELETE FROM big WHERE v < 0;

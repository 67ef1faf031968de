-- title: IF, GREATEST, LEAST, ABS, ROUND, FLOOR, CEIL
CREATE TABLE n (id INT, a INT, b INT, d DECIMAL(6,3));

CREATE VIEW f AS
SELECT id,
       IF(a > b, 'a', 'b') AS bigger,
       GREATEST(a, b) AS g,
       LEAST(a, b) AS l,
       ABS(a - b) AS dist,
       ROUND(d, 1) AS r1,
       FLOOR(d) AS fl,
       CEIL(d) AS ce
FROM n;

-- step
INSERT INTO n VALUES (1, 3, 5, 1.250), (2, -4, -9, -1.250), (3, 7, 7, 2.999);
-- step
INSERT INTO n VALUES (4, NULL, 1, NULL);
-- step
UPDATE n SET d = d * -1 WHERE id < 3;
-- step
DELETE FROM n WHERE a = b;

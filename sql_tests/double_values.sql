-- title: DOUBLE and FLOAT columns: arithmetic, comparisons, sums of exact binary fractions
CREATE TABLE f (id INT, x DOUBLE, y FLOAT);

CREATE VIEW scaled AS SELECT id, x * 2 AS x2, x / 4 AS x4, y + 0.5 AS y_plus FROM f;
CREATE VIEW positive AS SELECT id FROM f WHERE x > 0.0;
CREATE VIEW stats AS SELECT SUM(x) AS total, MIN(y) AS low, MAX(y) AS high, AVG(x) AS mean FROM f;

-- step
INSERT INTO f VALUES (1, 1.5, 0.25), (2, -2.25, 8.5), (3, 0.0, -1.0);
-- step
INSERT INTO f VALUES (4, NULL, NULL), (5, 1024.125, 3.75);
-- step
UPDATE f SET x = x * -1 WHERE id = 2;
-- step
DELETE FROM f WHERE y < 1;

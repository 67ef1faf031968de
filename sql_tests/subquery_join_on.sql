-- title: subqueries in the ON of inner, comma and cross-joined queries filter like WHERE: IN, EXISTS, scalar, correlated and uncorrelated, beside LEFT JOIN
CREATE TABLE a (k INT, v INT);
CREATE TABLE b (k INT, w INT);
CREATE TABLE c (k INT, z INT);

CREATE VIEW on_in AS SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k AND b.w IN (SELECT z FROM c);
CREATE VIEW on_scalar AS SELECT a.v, b.w FROM a INNER JOIN b ON a.k = b.k AND a.v > (SELECT MIN(z) FROM c WHERE c.k = b.k);
CREATE VIEW on_exists AS SELECT a.k, b.w FROM a JOIN b ON EXISTS (SELECT 1 FROM c WHERE c.k = a.k AND c.z = b.w);
CREATE VIEW on_then_left AS SELECT a.k, b.w, c.z FROM a JOIN b ON a.k = b.k AND NOT EXISTS (SELECT 1 FROM c WHERE c.z = a.v) LEFT JOIN c ON c.k = b.k;
CREATE VIEW left_then_on AS SELECT a.k, c.z, b.w FROM a LEFT JOIN c ON a.k = c.k JOIN b ON b.k = a.k AND b.w > (SELECT COUNT(*) FROM c);

-- step
INSERT INTO a VALUES (1, 10), (1, 10), (2, 20), (3, 5), (NULL, 1);
INSERT INTO b VALUES (1, 7), (2, 8), (2, 9), (3, 1), (NULL, 7);
INSERT INTO c VALUES (1, 7), (2, 9), (2, 3), (NULL, 10);
-- step
DELETE FROM c WHERE k = 2;
INSERT INTO c VALUES (3, 1);
-- step
DELETE FROM c;
INSERT INTO b VALUES (1, 100);
-- step
INSERT INTO c VALUES (1, 100), (1, 7), (2, 8), (NULL, NULL);
DELETE FROM a WHERE k = 2;

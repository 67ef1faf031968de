-- title: implicit joins (FROM a, b WHERE ...), equality and non-equality conditions
CREATE TABLE a (id INT, x INT);
CREATE TABLE b (id INT, y INT);
CREATE TABLE c (id INT, z INT);

CREATE VIEW ab AS SELECT a.id, a.x, b.y FROM a, b WHERE a.id = b.id;
CREATE VIEW abc AS SELECT a.id, c.z FROM a, b, c WHERE a.id = b.id AND b.id = c.id AND a.x < c.z;
CREATE VIEW a_lt_b AS SELECT a.id AS aid, b.id AS bid FROM a, b WHERE a.x < b.y;

-- step
INSERT INTO a VALUES (1, 10), (2, 20);
INSERT INTO b VALUES (1, 15), (2, 5);
-- step
INSERT INTO c VALUES (1, 11), (2, 19), (3, 99);
-- step
INSERT INTO a VALUES (3, 0);
INSERT INTO b VALUES (3, 1);
-- step
UPDATE c SET z = 25 WHERE id = 2;
-- step
DELETE FROM b WHERE id = 1;

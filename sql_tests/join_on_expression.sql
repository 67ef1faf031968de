-- title: join conditions on expressions of columns, and ON conditions on one side only
CREATE TABLE a (id INT, code STRING);
CREATE TABLE b (id INT, code STRING, active BOOLEAN);

CREATE VIEW shifted AS SELECT a.id AS aid, b.id AS bid FROM a JOIN b ON a.id + 1 = b.id;
CREATE VIEW by_code AS SELECT a.id AS aid, b.id AS bid FROM a JOIN b ON upper(a.code) = b.code AND b.active;

-- step
INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, NULL);
INSERT INTO b VALUES (2, 'X', true), (3, 'Y', false), (4, 'x', true);
-- step
UPDATE b SET active = true WHERE id = 3;
-- step
INSERT INTO a VALUES (3, 'y');
-- step
DELETE FROM a WHERE id = 1;

-- title: INTERSECT (distinct): duplicates collapse, NULL rows match each other
CREATE TABLE a (k INT, v STRING);
CREATE TABLE b (k INT, v STRING);

CREATE VIEW common AS SELECT k, v FROM a INTERSECT SELECT k, v FROM b;
CREATE VIEW common_keys AS SELECT k FROM a INTERSECT SELECT k FROM b;

-- step
INSERT INTO a VALUES (1, 'x'), (1, 'x'), (2, 'y'), (NULL, 'n');
INSERT INTO b VALUES (1, 'x'), (NULL, 'n'), (3, 'z');
-- step
INSERT INTO b VALUES (2, 'other'), (1, 'x');
-- step
DELETE FROM b WHERE k = 1;
-- step
UPDATE a SET v = 'other' WHERE k = 2;
-- step
DELETE FROM a WHERE k IS NULL;

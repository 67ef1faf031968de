-- title: EXCEPT ALL and INTERSECT ALL are bag operations (NULLs equal), maintained as relu(a - b)
CREATE TABLE a (x INT, y STRING);
CREATE TABLE b (x INT, y STRING);
CREATE VIEW ea AS SELECT * FROM a EXCEPT ALL SELECT * FROM b;
CREATE VIEW ia AS SELECT * FROM a INTERSECT ALL SELECT * FROM b;
CREATE VIEW ea_keys AS SELECT x FROM a EXCEPT ALL SELECT x FROM b WHERE y IS NOT NULL;
-- step
INSERT INTO a VALUES (1, 'p'), (1, 'p'), (1, 'p'), (2, NULL), (3, 'q');
INSERT INTO b VALUES (1, 'p'), (2, NULL), (2, NULL), (4, 'r');
-- step
DELETE FROM b WHERE x = 1;
INSERT INTO a VALUES (4, 'r');
-- step
INSERT INTO b VALUES (1, 'p'), (1, 'p'), (1, 'p'), (1, 'p');
DELETE FROM a WHERE x = 2;
-- step
DELETE FROM b WHERE x = 1;
DELETE FROM a WHERE x = 1;

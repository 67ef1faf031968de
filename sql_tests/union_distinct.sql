-- title: UNION (distinct) across inputs with duplicates and NULLs
CREATE TABLE a (k INT, v STRING);
CREATE TABLE b (k INT, v STRING);

CREATE VIEW u AS SELECT k, v FROM a UNION SELECT k, v FROM b;
CREATE VIEW three AS SELECT k FROM a UNION SELECT k FROM b UNION SELECT k + 10 FROM a;

-- step
INSERT INTO a VALUES (1, 'x'), (1, 'x'), (NULL, 'n');
INSERT INTO b VALUES (1, 'x'), (NULL, 'n'), (2, NULL);
-- step
DELETE FROM a WHERE k = 1;
-- step
DELETE FROM b WHERE k = 1;
-- step
INSERT INTO a VALUES (2, NULL), (2, NULL);
-- step
DELETE FROM b;

-- title: EXCEPT (distinct): left rows with no equal right row, NULLs compared as equal
CREATE TABLE a (k INT, v STRING);
CREATE TABLE b (k INT, v STRING);

CREATE VIEW only_a AS SELECT k, v FROM a EXCEPT SELECT k, v FROM b;
CREATE VIEW only_a_keys AS SELECT k FROM a EXCEPT SELECT k FROM b;

-- step
INSERT INTO a VALUES (1, 'x'), (1, 'x'), (2, 'y'), (NULL, 'n'), (NULL, NULL);
-- step
INSERT INTO b VALUES (1, 'x'), (NULL, NULL);
-- step
INSERT INTO b VALUES (2, 'other'), (1, 'x');
-- step
DELETE FROM b WHERE k = 1;
-- step
DELETE FROM a WHERE k = 1;

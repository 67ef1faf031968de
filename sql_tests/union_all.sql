-- title: UNION ALL keeps duplicates from both sides, NULLs included
CREATE TABLE a (k INT, v STRING);
CREATE TABLE b (k INT, v STRING);

CREATE VIEW both_sides AS SELECT k, v FROM a UNION ALL SELECT k, v FROM b;
CREATE VIEW keys AS SELECT k FROM a WHERE k > 1 UNION ALL SELECT k FROM b WHERE v IS NOT NULL;

-- step
INSERT INTO a VALUES (1, 'x'), (2, 'y'), (2, 'y');
INSERT INTO b VALUES (2, 'y'), (NULL, NULL);
-- step
INSERT INTO b VALUES (3, 'z'), (NULL, NULL);
-- step
DELETE FROM a WHERE k = 2;
-- step
DELETE FROM b;

-- title: LEFT SEMI and LEFT ANTI joins (Spark syntax) keep each left row as often as the left side holds it
CREATE TABLE l (k INT, a STRING);
CREATE TABLE r (k INT, b INT);

CREATE VIEW semi AS SELECT * FROM l LEFT SEMI JOIN r ON l.k = r.k;
CREATE VIEW anti AS SELECT l.a FROM l LEFT ANTI JOIN r ON l.k = r.k AND r.b > 1;

-- step
INSERT INTO l VALUES (1, 'x'), (1, 'x'), (2, 'y'), (NULL, 'n');
INSERT INTO r VALUES (1, 1), (1, 2), (NULL, 3);
-- step
DELETE FROM r WHERE b = 2;
-- step
DELETE FROM r;
INSERT INTO r VALUES (2, 5);

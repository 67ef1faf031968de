-- title: a join key repeated in ON (a.s = b.s AND a.s = b.s, a.s = b.s AND a.s = b.t) in outer, semi, anti joins and subqueries
CREATE TABLE a (k INT, s STRING);
CREATE TABLE b (k INT, s STRING, t STRING);
CREATE VIEW r AS SELECT a.k, b.k AS bk FROM a RIGHT JOIN b ON a.s = b.s AND a.s = b.s;
CREATE VIEW l AS SELECT a.k, b.k AS bk FROM a LEFT JOIN b ON a.s = b.s AND a.s = b.t;
CREATE VIEW f AS SELECT a.k, b.k AS bk FROM a FULL JOIN b ON a.s = b.s AND a.k = b.k AND b.s = a.s;
CREATE VIEW semi AS SELECT a.k FROM a LEFT SEMI JOIN b ON a.s = b.s AND a.s = b.s;
CREATE VIEW anti AS SELECT a.k FROM a LEFT ANTI JOIN b ON a.s = b.s AND b.t = a.s;
CREATE VIEW ex AS SELECT a.k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.s = a.s AND b.s = a.s);
CREATE VIEW ex2 AS SELECT a.k FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.s = a.s AND b.t = a.s);
CREATE VIEW sc AS SELECT a.k, (SELECT COUNT(*) FROM b WHERE b.s = a.s AND b.t = a.s) AS n FROM a;
CREATE VIEW inn AS SELECT a.k, b.k AS bk FROM a JOIN b ON a.s = b.s AND a.s = b.s AND b.t = a.s;
-- step
INSERT INTO a VALUES (1, 'x'), (2, 'y'), (3, NULL), (4, 'z');
INSERT INTO b VALUES (10, 'x', 'x'), (20, 'y', 'z'), (30, NULL, NULL), (40, 'z', 'z');
-- step
DELETE FROM b WHERE k = 10;
INSERT INTO b VALUES (11, 'y', 'y');
-- step
DELETE FROM a WHERE k >= 2;

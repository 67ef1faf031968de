-- title: LEFT, RIGHT and FULL joins: several matches per key on both sides, duplicate preserved rows, NULL keys, non-equi ON, the last match deleted and re-inserted
CREATE TABLE l (k INT, a STRING);
CREATE TABLE r (k INT, b INT);

CREATE VIEW lj AS SELECT l.k, l.a, r.k AS rk, r.b FROM l LEFT JOIN r ON l.k = r.k;
CREATE VIEW rj AS SELECT l.a, r.k, r.b FROM l RIGHT JOIN r ON l.k = r.k AND r.b > 10;
CREATE VIEW fj AS SELECT l.k, l.a, r.k AS rk, r.b FROM l FULL OUTER JOIN r ON l.k = r.k;
CREATE VIEW lj_nonequi AS SELECT l.a, r.b FROM l LEFT JOIN r ON l.k < r.k AND r.b IS NOT NULL;
CREATE VIEW lj_filter_left AS SELECT l.a, r.b FROM l LEFT JOIN r ON l.k = r.k AND l.a = 'x';
CREATE VIEW lj_where AS SELECT l.a, r.b FROM l LEFT JOIN r ON l.k = r.k WHERE r.b > 5;
CREATE VIEW lj_where_null AS SELECT l.a FROM l LEFT JOIN r ON l.k = r.k WHERE r.k IS NULL;

-- step
INSERT INTO l VALUES (1, 'x'), (1, 'x'), (2, 'y'), (NULL, 'n'), (3, NULL);
INSERT INTO r VALUES (1, 10), (1, 20), (2, 30), (NULL, 40), (4, NULL);
-- step
DELETE FROM r WHERE k = 2;
-- step
INSERT INTO r VALUES (2, 31), (3, 5);
DELETE FROM l WHERE a = 'x';
-- step
INSERT INTO l VALUES (1, 'x');
DELETE FROM r WHERE k = 1 AND b = 10;
-- step
DELETE FROM r;
-- step
INSERT INTO r VALUES (1, 11), (1, 11), (NULL, NULL);
DELETE FROM l WHERE k IS NULL;

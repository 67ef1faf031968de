-- title: the paper's §4.4 example: DISTINCT over a join of two filtered projections (Figure 1)
CREATE TABLE t (x INT, id INT, a INT);
CREATE TABLE r (id INT, y INT, s INT);

CREATE VIEW v AS
SELECT DISTINCT t1.x, t2.y
FROM (SELECT t.x, t.id FROM t WHERE t.a > 2) t1
JOIN (SELECT r.id, r.y FROM r WHERE r.s > 5) t2 ON t1.id = t2.id;

-- step
INSERT INTO t VALUES (1, 10, 3), (1, 11, 5), (2, 12, 1);
INSERT INTO r VALUES (10, 100, 6), (11, 100, 7), (12, 200, 9);
-- step
INSERT INTO r VALUES (10, 300, 1);
DELETE FROM r WHERE id = 11;
-- step
DELETE FROM r WHERE id = 10 AND y = 100;
-- step
UPDATE t SET a = 9 WHERE id = 12;
-- step
DELETE FROM t;

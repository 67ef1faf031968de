-- title: a parenthesized inner join in FROM, flattened (sqllogictest's `FROM ( t AS a CROSS JOIN t AS b )`)
CREATE TABLE t (x INT, y INT);
CREATE TABLE u (k INT, v STRING);

CREATE VIEW pairs AS
SELECT COUNT(*) AS n, SUM(a.x * b.y) AS s FROM (t AS a CROSS JOIN t AS b);

CREATE VIEW joined AS
SELECT a.x, b.y, u.v FROM (t a CROSS JOIN t b), u WHERE a.x = u.k AND b.y = u.k;

CREATE VIEW nested AS
SELECT u.v, a.y FROM u JOIN ((t a CROSS JOIN t b) CROSS JOIN t c) ON u.k = a.x AND a.x = b.x AND b.x = c.y;

-- step
INSERT INTO t VALUES (1, 1), (2, 1), (1, 2);
INSERT INTO u VALUES (1, 'one'), (2, 'two');
-- step
DELETE FROM t WHERE x = 2;
INSERT INTO t VALUES (2, 2);
-- step
UPDATE u SET k = 2 WHERE v = 'one';

-- title: self-join: employees and their managers from one table
CREATE TABLE emp (id INT, name STRING, boss INT);

CREATE VIEW reports AS SELECT e.name AS employee, m.name AS manager FROM emp e JOIN emp m ON e.boss = m.id;
CREATE VIEW same_boss AS
SELECT a.name AS first, b.name AS second FROM emp a JOIN emp b ON a.boss = b.boss AND a.id < b.id;

-- step
INSERT INTO emp VALUES (1, 'ceo', NULL), (2, 'cto', 1), (3, 'cfo', 1);
-- step
INSERT INTO emp VALUES (4, 'dev', 2), (5, 'ops', 2);
-- step
UPDATE emp SET boss = 3 WHERE id = 5;
-- step
DELETE FROM emp WHERE id = 2;

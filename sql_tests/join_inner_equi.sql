-- title: inner equi-join, with a filter, over changes on both sides
CREATE TABLE emp (id INT, name STRING, dept INT);
CREATE TABLE dept (id INT, title STRING);

CREATE VIEW staff AS SELECT e.name, d.title FROM emp e JOIN dept d ON e.dept = d.id;
CREATE VIEW eng AS SELECT e.name FROM emp e INNER JOIN dept d ON e.dept = d.id WHERE d.title = 'eng';

-- step
INSERT INTO emp VALUES (1, 'ann', 10), (2, 'bob', 20), (3, 'cid', 30);
-- step
INSERT INTO dept VALUES (10, 'eng'), (20, 'ops');
-- step
INSERT INTO emp VALUES (4, 'dee', 10);
INSERT INTO dept VALUES (30, 'eng');
-- step
UPDATE dept SET title = 'ops' WHERE id = 10;
-- step
DELETE FROM emp WHERE dept = 30;
DELETE FROM dept WHERE id = 20;

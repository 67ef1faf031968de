-- title: UPDATE of filtered columns, join keys and group keys; UPDATE without WHERE
CREATE TABLE acct (id INT, owner STRING, balance INT, branch INT);
CREATE TABLE branch (id INT, city STRING);

CREATE VIEW overdrawn AS SELECT id, owner FROM acct WHERE balance < 0;
CREATE VIEW by_city AS SELECT b.city, SUM(a.balance) AS total FROM acct a JOIN branch b ON a.branch = b.id GROUP BY b.city;

-- step
INSERT INTO acct VALUES (1, 'ann', 100, 1), (2, 'bob', -5, 1), (3, 'cy', 30, 2);
INSERT INTO branch VALUES (1, 'oslo'), (2, 'rome');
-- step
UPDATE acct SET balance = balance - 200 WHERE owner = 'ann';
-- step
UPDATE acct SET branch = 2 WHERE id = 2;
-- step
UPDATE branch SET city = 'oslo' WHERE id = 2;
-- step
UPDATE acct SET balance = 0, owner = upper(owner);

-- title: subqueries in FROM: filtered, aggregated, and joined with a table
CREATE TABLE orders (id INT, customer STRING, amount INT);
CREATE TABLE vip (customer STRING);

CREATE VIEW big_spenders AS
SELECT s.customer, s.total
FROM (SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer) s
WHERE s.total > 100;

CREATE VIEW vip_orders AS
SELECT o.id, o.amount
FROM (SELECT id, customer, amount FROM orders WHERE amount > 10) o
JOIN vip v ON o.customer = v.customer;

CREATE VIEW nested AS
SELECT n.customer FROM (SELECT customer FROM (SELECT customer, amount FROM orders) i WHERE i.amount < 50) n;

-- step
INSERT INTO orders VALUES (1, 'ann', 80), (2, 'ann', 40), (3, 'bob', 5);
-- step
INSERT INTO vip VALUES ('ann'), ('bob');
-- step
INSERT INTO orders VALUES (4, 'bob', 200);
-- step
DELETE FROM orders WHERE id = 2;
-- step
DELETE FROM vip WHERE customer = 'bob';

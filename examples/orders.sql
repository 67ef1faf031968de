-- title: orders per customer, maintained incrementally
CREATE TABLE customers (id INT, name STRING, region STRING);
CREATE TABLE orders (id INT, customer_id INT, amount DECIMAL(10,2), status STRING);

CREATE VIEW big_orders AS
SELECT c.name, o.id, o.amount
FROM orders o JOIN customers c ON o.customer_id = c.id
WHERE o.amount >= 100 AND o.status <> 'cancelled';

CREATE VIEW revenue_by_region AS
SELECT c.region, COUNT(*) AS orders, SUM(o.amount) AS revenue, MAX(o.amount) AS largest
FROM orders o JOIN customers c ON o.customer_id = c.id
GROUP BY c.region
HAVING SUM(o.amount) > 0;

CREATE VIEW active_regions AS
SELECT DISTINCT region FROM revenue_by_region;

-- step
INSERT INTO customers VALUES (1, 'ada', 'north'), (2, 'bob', 'south'), (3, 'cy', 'north');
INSERT INTO orders VALUES (10, 1, 250.00, 'paid'), (11, 2, 40.50, 'paid'), (12, 3, 120.00, 'open');
-- step
INSERT INTO orders VALUES (13, 2, 300.00, 'paid');
UPDATE orders SET status = 'cancelled' WHERE id = 12;
-- step
DELETE FROM orders WHERE customer_id = 2;
-- step
DELETE FROM customers WHERE region = 'north';

-- title: three-way join: orders, customers and products
CREATE TABLE customers (id INT, name STRING);
CREATE TABLE products (id INT, label STRING, price INT);
CREATE TABLE orders (id INT, customer INT, product INT, qty INT);

CREATE VIEW order_lines AS
SELECT c.name, p.label, o.qty * p.price AS total
FROM orders o JOIN customers c ON o.customer = c.id JOIN products p ON o.product = p.id;

-- step
INSERT INTO customers VALUES (1, 'ann'), (2, 'bob');
INSERT INTO products VALUES (10, 'pen', 2), (11, 'ink', 5);
-- step
INSERT INTO orders VALUES (100, 1, 10, 3), (101, 2, 11, 1), (102, 3, 10, 1);
-- step
INSERT INTO customers VALUES (3, 'cy');
UPDATE products SET price = 3 WHERE id = 10;
-- step
DELETE FROM customers WHERE id = 1;
INSERT INTO orders VALUES (103, 2, 10, 2);
-- step
DELETE FROM products WHERE id = 10;

-- title: aggregates over a join, with changes on both sides moving rows between groups
CREATE TABLE orders (id INT, cust INT, amount INT);
CREATE TABLE cust (id INT, region STRING);

CREATE VIEW revenue AS
SELECT c.region, COUNT(*) AS orders, SUM(o.amount) AS total, MIN(o.amount) AS smallest, MAX(o.amount) AS largest
FROM orders o JOIN cust c ON o.cust = c.id
GROUP BY c.region;

-- step
INSERT INTO orders VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30);
INSERT INTO cust VALUES (1, 'n'), (2, 's');
-- step
UPDATE cust SET region = 's' WHERE id = 1;
-- step
INSERT INTO orders VALUES (4, 2, 5);
INSERT INTO cust VALUES (3, 'e');
-- step
INSERT INTO orders VALUES (5, 3, 1);
DELETE FROM orders WHERE amount = 30;
-- step
DELETE FROM cust WHERE region = 's';

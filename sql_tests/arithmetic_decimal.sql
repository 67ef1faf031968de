-- title: DECIMAL arithmetic, comparisons with integer literals, and sums
CREATE TABLE prices (sku STRING, price DECIMAL(8,2), qty INT, discount DECIMAL(4,3));

CREATE VIEW lines AS
SELECT sku, price * qty AS gross, price - price * discount AS net_price, price + 0.01 AS bumped, price / 4 AS quarter
FROM prices;
CREATE VIEW cheap AS SELECT sku FROM prices WHERE price < 10;
CREATE VIEW totals AS SELECT SUM(price * qty) AS revenue, SUM(discount) AS discounts FROM prices;

-- step
INSERT INTO prices VALUES ('a', 9.99, 3, 0.100), ('b', 120.50, 1, 0.000), ('c', 0.05, 100, 0.125);
-- step
INSERT INTO prices VALUES ('d', NULL, 2, NULL), ('e', 10.00, 0, 0.500);
-- step
UPDATE prices SET price = price * 2 WHERE sku = 'a';
-- step
DELETE FROM prices WHERE qty >= 100;

-- A team's golden: the tables, the view, then the changes; revenue.out is what dbspc
-- printed, blessed by `dbspc test --update examples/goldens` once DuckDB agreed.
CREATE TABLE orders (id INT, region STRING, amount DECIMAL(10,2));
CREATE VIEW revenue AS SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY region;
-- step
INSERT INTO orders VALUES (1, 'eu', 10.00), (2, 'us', 5.50), (3, 'eu', 1.25);
-- step
DELETE FROM orders WHERE id = 1;
-- step
UPDATE orders SET amount = 2.00 WHERE id = 2;

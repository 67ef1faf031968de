-- title: aggregates of expressions, expressions of aggregates, conditional aggregation
CREATE TABLE items (cat STRING, price INT, qty INT, ok BOOLEAN);

CREATE VIEW summary AS
SELECT cat,
       SUM(price * qty) AS revenue,
       COUNT(*) + 1 AS n_plus_one,
       MAX(price) - MIN(price) AS spread,
       SUM(CASE WHEN ok THEN qty ELSE 0 END) AS ok_qty,
       COUNT(CASE WHEN price > 10 THEN 1 END) AS pricey
FROM items
GROUP BY cat
HAVING AVG(price) >= 5;

-- step
INSERT INTO items VALUES ('a', 10, 2, true), ('a', 20, 1, false), ('b', 4, 5, true);
-- step
INSERT INTO items VALUES ('b', 8, 1, NULL), ('c', 1, 1, true);
-- step
UPDATE items SET qty = qty * 10 WHERE ok;
-- step
DELETE FROM items WHERE price = 20;

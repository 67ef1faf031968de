-- title: top-k: ORDER BY ... LIMIT (and OFFSET) over a join and an aggregate, per-group top-k via ROW_NUMBER in a subquery and via QUALIFY
CREATE TABLE sales (id INT, shop INT, item STRING, qty INT);
CREATE TABLE shops (id INT, city STRING);

CREATE VIEW top_items AS
SELECT item, SUM(qty) AS total FROM sales GROUP BY item ORDER BY total DESC, item LIMIT 2;

CREATE VIEW page_two AS
SELECT s.id, h.city, s.qty FROM sales s JOIN shops h ON s.shop = h.id ORDER BY s.qty, s.id LIMIT 2 OFFSET 2;

CREATE VIEW best_per_city AS
SELECT city, id, qty FROM (
  SELECT h.city, s.id, s.qty, ROW_NUMBER() OVER (PARTITION BY h.city ORDER BY s.qty DESC, s.id) AS rn
  FROM sales s JOIN shops h ON s.shop = h.id
) ranked WHERE rn <= 2;

CREATE VIEW first_sale_per_shop AS
SELECT id, shop, item FROM sales QUALIFY ROW_NUMBER() OVER (PARTITION BY shop ORDER BY id) = 1;

CREATE VIEW biggest AS
SELECT shop, qty, RANK() OVER (PARTITION BY shop ORDER BY qty DESC) AS r FROM sales QUALIFY r <= 1;

-- step
INSERT INTO shops VALUES (1, 'oslo'), (2, 'rome'), (3, NULL);
INSERT INTO sales VALUES (1, 1, 'pen', 5), (2, 1, 'ink', 3), (3, 2, 'pen', 8), (4, 2, 'cup', 1), (5, 3, 'cup', 9), (6, 1, 'pen', 5);
-- step
INSERT INTO sales VALUES (7, 2, 'ink', 20), (8, NULL, 'pad', 2);
-- step
DELETE FROM sales WHERE id IN (1, 7);
UPDATE shops SET city = 'oslo' WHERE id = 2;
-- step
DELETE FROM sales WHERE shop = 1;
-- step
DELETE FROM shops WHERE id = 2;
INSERT INTO sales VALUES (9, 3, 'ink', 9);

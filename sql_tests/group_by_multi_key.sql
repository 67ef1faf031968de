-- title: GROUP BY two columns, with NULLs in either key
CREATE TABLE sales (region STRING, yr INT, amount INT);

CREATE VIEW totals AS SELECT region, yr, SUM(amount) AS total, COUNT(*) AS n FROM sales GROUP BY region, yr;
CREATE VIEW swapped AS SELECT yr, region, MAX(amount) AS best FROM sales GROUP BY yr, region;

-- step
INSERT INTO sales VALUES ('n', 2023, 1), ('n', 2024, 2), ('s', 2024, 3), ('n', 2024, 4);
-- step
INSERT INTO sales VALUES (NULL, 2024, 5), ('s', NULL, 6), (NULL, NULL, 7);
-- step
UPDATE sales SET yr = 2024 WHERE yr = 2023;
-- step
DELETE FROM sales WHERE region = 'n';

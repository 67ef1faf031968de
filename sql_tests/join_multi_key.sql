-- title: join on two key columns
CREATE TABLE sales (region STRING, yr INT, amount INT);
CREATE TABLE targets (region STRING, yr INT, goal INT);

CREATE VIEW vs_target AS
SELECT s.region, s.yr, s.amount, t.goal
FROM sales s JOIN targets t ON s.region = t.region AND s.yr = t.yr;

-- step
INSERT INTO sales VALUES ('n', 2023, 10), ('n', 2024, 20), ('s', 2024, 30);
INSERT INTO targets VALUES ('n', 2024, 25), ('s', 2023, 5);
-- step
INSERT INTO targets VALUES ('s', 2024, 28), ('n', 2023, 9);
-- step
UPDATE sales SET yr = 2023 WHERE region = 's';
-- step
DELETE FROM targets WHERE region = 'n' AND yr = 2024;

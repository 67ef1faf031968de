-- title: window functions over GROUP BY results (a running total of group sums, ranking groups), ORDER BY without LIMIT (meaningless for a view, accepted), a view over a windowed view, duplicate rows
CREATE TABLE o (region STRING, month INT, amount INT);

CREATE VIEW monthly AS
SELECT region, month, SUM(amount) AS total,
       SUM(SUM(amount)) OVER (PARTITION BY region ORDER BY month) AS ytd,
       RANK() OVER (PARTITION BY month ORDER BY SUM(amount) DESC) AS place,
       COUNT(*) OVER (PARTITION BY region) AS months
FROM o
GROUP BY region, month
ORDER BY region, month;

CREATE VIEW leaders AS
SELECT month, region FROM monthly WHERE place = 1;

CREATE VIEW dup_numbers AS
SELECT region, amount, ROW_NUMBER() OVER (PARTITION BY region ORDER BY amount) AS rn FROM o;

-- step
INSERT INTO o VALUES ('n', 1, 10), ('n', 1, 10), ('n', 2, 5), ('s', 1, 30), ('s', 2, 1), (NULL, 2, 7);
-- step
INSERT INTO o VALUES ('s', 2, 10), ('n', 3, 4);
-- step
DELETE FROM o WHERE region = 'n' AND month = 1;
-- step
DELETE FROM o WHERE region IS NULL;
INSERT INTO o VALUES ('n', 1, 10);

-- A materialized view over another one of the project (defined in customer_revenue.sql,
-- a file listed after this one: the order of definitions does not matter).
CREATE MATERIALIZED VIEW region_revenue AS
SELECT region, COUNT(*) AS customers, SUM(orders) AS orders, SUM(revenue) AS revenue
FROM customer_revenue
GROUP BY region;

-- Customers whose revenue exceeds 100.
CREATE MATERIALIZED VIEW big_customers AS
SELECT customer_id, region, revenue FROM customer_revenue WHERE revenue > 100;

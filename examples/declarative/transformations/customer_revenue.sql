-- Orders and revenue per customer: a join and an aggregate over the two source tables.
CREATE MATERIALIZED VIEW customer_revenue AS
SELECT c.id AS customer_id, c.region, COUNT(*) AS orders, SUM(o.amount) AS revenue
FROM orders o
JOIN customers c ON o.customer_id = c.id
GROUP BY c.id, c.region;

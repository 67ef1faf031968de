-- title: add_months and date_add far from today (years past 9999 and before 1), as day numbers, as Spark computes them
-- oracle: spark (DuckDB's dates stop at year 294247)
CREATE TABLE t (id INT, d DATE, n INT);
CREATE VIEW v AS SELECT id, datediff(add_months(d, n), DATE '1970-01-01') AS am, datediff(date_add(d, n), DATE '1970-01-01') AS da FROM t;
-- step
INSERT INTO t VALUES (1, DATE '2024-01-01', 3000000), (2, DATE '2024-01-01', -3000000), (3, DATE '2024-01-31', 120000), (4, DATE '2024-01-31', -120000),
  (5, DATE '2024-03-31', -1), (6, DATE '2000-02-29', 12), (7, DATE '2000-02-29', -1200), (8, DATE '0001-01-01', -1), (9, DATE '2024-01-31', 25000000);

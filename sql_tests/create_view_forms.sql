-- title: CREATE MATERIALIZED VIEW, OR REPLACE (the later definition wins), IF NOT EXISTS (a no-op when the view exists), TEMPORARY with a column list and comments, and Spark's names for unaliased items
CREATE TABLE sales (region STRING, amount INT);

CREATE MATERIALIZED VIEW totals AS
SELECT region, sum(amount), count(*) FROM sales GROUP BY region;

CREATE VIEW big AS SELECT region, amount FROM sales WHERE amount > 100;
CREATE OR REPLACE VIEW big AS SELECT region, amount FROM sales WHERE amount > 10;
CREATE VIEW IF NOT EXISTS big AS SELECT region FROM sales;

CREATE OR REPLACE MATERIALIZED VIEW regions AS SELECT DISTINCT region FROM sales;
CREATE VIEW IF NOT EXISTS small AS SELECT region, amount FROM sales WHERE amount <= 10;

CREATE TEMPORARY VIEW doubled (region COMMENT 'where', twice) COMMENT 'amounts, doubled' AS
SELECT region, amount * 2 FROM big;

-- step
INSERT INTO sales VALUES ('north', 5), ('north', 50), ('south', 500);
-- step
INSERT INTO sales VALUES ('south', 20);
DELETE FROM sales WHERE amount = 5;

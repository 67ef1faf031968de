-- title: SUM/COUNT/AVG/MIN/MAX OVER: running totals (RANGE default, ties included), ROWS frames, whole partitions, NULLs
CREATE TABLE s (id INT, acct STRING, day INT, amt INT);

CREATE VIEW running AS
SELECT id, acct, day, amt,
       SUM(amt) OVER (PARTITION BY acct ORDER BY day) AS total,
       COUNT(amt) OVER (PARTITION BY acct ORDER BY day) AS n,
       COUNT(*) OVER (PARTITION BY acct ORDER BY day, id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS rows_so_far,
       MIN(amt) OVER (PARTITION BY acct ORDER BY day) AS low,
       MAX(amt) OVER (PARTITION BY acct ORDER BY day DESC RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS high_before
FROM s;

CREATE VIEW moving AS
SELECT id, acct, day,
       SUM(amt) OVER (PARTITION BY acct ORDER BY day, id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s3,
       AVG(amt) OVER (PARTITION BY acct ORDER BY day, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS avg3,
       SUM(amt) OVER (PARTITION BY acct ORDER BY day, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before,
       MAX(amt) OVER (PARTITION BY acct ORDER BY day, id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS max_after
FROM s;

CREATE VIEW shares AS
SELECT id, acct, amt, SUM(amt) OVER (PARTITION BY acct) AS acct_total, COUNT(*) OVER () AS everyone,
       AVG(amt) OVER (PARTITION BY acct) AS acct_avg
FROM s;

-- step
INSERT INTO s VALUES (1, 'a', 1, 10), (2, 'a', 2, 20), (3, 'a', 2, 5), (4, 'a', 3, NULL), (5, 'b', 1, 7), (6, NULL, 1, 1), (7, NULL, NULL, 2);
-- step
INSERT INTO s VALUES (8, 'a', 1, 3), (9, 'b', 0, -4), (5, 'b', 1, 7);
-- step
DELETE FROM s WHERE acct = 'b';
UPDATE s SET amt = 100 WHERE id = 2;
-- step
DELETE FROM s WHERE id IN (6, 7);
INSERT INTO s VALUES (10, 'c', 5, NULL);
-- step
DELETE FROM s WHERE acct = 'a';

-- title: LAG and LEAD with offsets and defaults, per partition, with NULL values and partition keys
CREATE TABLE p (id INT, k STRING, ts INT, v DOUBLE);

CREATE VIEW deltas AS
SELECT id, k, ts, v,
       LAG(v) OVER (PARTITION BY k ORDER BY ts, id) AS prev_v,
       v - LAG(v, 1, 0) OVER (PARTITION BY k ORDER BY ts, id) AS change,
       LEAD(ts, 2) OVER (PARTITION BY k ORDER BY ts, id) AS ts_after_next,
       LEAD(id, 1, -1) OVER (PARTITION BY k ORDER BY ts DESC, id) AS next_id_desc
FROM p;

-- step
INSERT INTO p VALUES (1, 'x', 1, 1.5), (2, 'x', 2, NULL), (3, 'x', 3, 4.0), (4, 'y', 1, 2.0), (5, NULL, 1, 8.0), (6, NULL, 2, 9.0);
-- step
INSERT INTO p VALUES (7, 'x', 2, 3.0), (8, 'y', 0, 1.0);
-- step
DELETE FROM p WHERE id = 3 OR k = 'y';
-- step
UPDATE p SET ts = 10 WHERE id = 1;

-- title: DATE and TIMESTAMP columns: literals, comparisons, grouping, MIN/MAX
CREATE TABLE logins (usr STRING, day DATE, at TIMESTAMP);

CREATE VIEW recent AS SELECT usr, at FROM logins WHERE at >= TIMESTAMP '2024-05-01 00:00:00';
CREATE VIEW per_day AS SELECT day, COUNT(*) AS n, MIN(at) AS first_at, MAX(at) AS last_at FROM logins GROUP BY day;
CREATE VIEW first_seen AS SELECT usr, MIN(day) AS first_day FROM logins GROUP BY usr;

-- step
INSERT INTO logins VALUES ('ann', DATE '2024-04-30', TIMESTAMP '2024-04-30 23:59:59'), ('bob', DATE '2024-05-01', TIMESTAMP '2024-05-01 08:00:00');
-- step
INSERT INTO logins VALUES ('ann', DATE '2024-05-01', TIMESTAMP '2024-05-01 09:30:00'), ('cy', NULL, NULL);
-- step
DELETE FROM logins WHERE day = DATE '2024-04-30';
-- step
UPDATE logins SET day = DATE '2024-05-02' WHERE usr = 'bob';

-- title: views defined over other views, three levels deep
CREATE TABLE events (id INT, kind STRING, amount INT);

CREATE VIEW valid AS SELECT id, kind, amount FROM events WHERE amount IS NOT NULL AND amount > 0;
CREATE VIEW per_kind AS SELECT kind, COUNT(*) AS n, SUM(amount) AS total FROM valid GROUP BY kind;
CREATE VIEW popular AS SELECT kind FROM per_kind WHERE n >= 2;
CREATE VIEW popular_events AS SELECT v.id, v.kind FROM valid v JOIN popular p ON v.kind = p.kind;

-- step
INSERT INTO events VALUES (1, 'click', 1), (2, 'click', 2), (3, 'view', 5);
-- step
INSERT INTO events VALUES (4, 'view', NULL), (5, 'view', 3), (6, 'buy', -1);
-- step
UPDATE events SET amount = 0 WHERE id = 1;
-- step
DELETE FROM events WHERE kind = 'view';

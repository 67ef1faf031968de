-- title: BOOLEAN columns: as predicates, compared, grouped and counted
CREATE TABLE tasks (id INT, done BOOLEAN, urgent BOOLEAN);

CREATE VIEW open_urgent AS SELECT id FROM tasks WHERE urgent AND NOT done;
CREATE VIEW by_state AS SELECT done, COUNT(*) AS n FROM tasks GROUP BY done;
CREATE VIEW mismatched AS SELECT id FROM tasks WHERE done <> urgent;
CREATE VIEW is_true AS SELECT id FROM tasks WHERE done IS TRUE;

-- step
INSERT INTO tasks VALUES (1, false, true), (2, true, true), (3, NULL, true);
-- step
INSERT INTO tasks VALUES (4, false, false), (5, NULL, NULL);
-- step
UPDATE tasks SET done = true WHERE id = 1;
-- step
DELETE FROM tasks WHERE done IS NULL;

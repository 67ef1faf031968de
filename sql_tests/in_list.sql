-- title: IN and NOT IN over literal lists, with NULL in the list and in the value
CREATE TABLE r (id INT, color STRING, n INT);

CREATE VIEW warm AS SELECT id FROM r WHERE color IN ('red', 'orange', 'yellow');
CREATE VIEW not_warm AS SELECT id FROM r WHERE color NOT IN ('red', 'orange', 'yellow');
CREATE VIEW in_with_null AS SELECT id, n IN (1, NULL) AS maybe FROM r;
CREATE VIEW not_in_with_null AS SELECT id FROM r WHERE n NOT IN (1, NULL);
CREATE VIEW small AS SELECT id FROM r WHERE n IN (1, 2, 3);

-- step
INSERT INTO r VALUES (1, 'red', 1), (2, 'blue', 2), (3, NULL, 3);
-- step
INSERT INTO r VALUES (4, 'yellow', NULL), (5, 'green', 7);
-- step
UPDATE r SET color = 'orange' WHERE color = 'blue';
-- step
DELETE FROM r WHERE n IS NULL OR n = 1;

-- title: LIKE with % and _ wildcards, NOT (... LIKE ...)
CREATE TABLE w (id INT, word STRING);

CREATE VIEW starts_ca AS SELECT id, word FROM w WHERE word LIKE 'ca%';
CREATE VIEW three_letters AS SELECT id, word FROM w WHERE word LIKE '___';
CREATE VIEW has_a_then_one AS SELECT id FROM w WHERE word LIKE '%a_';
CREATE VIEW not_ending_t AS SELECT id FROM w WHERE NOT (word LIKE '%t');

-- step
INSERT INTO w VALUES (1, 'cat'), (2, 'car'), (3, 'cart'), (4, 'dog');
-- step
INSERT INTO w VALUES (5, NULL), (6, 'ca'), (7, 'Cat');
-- step
UPDATE w SET word = 'cab' WHERE id = 4;
-- step
DELETE FROM w WHERE word LIKE 'car%';

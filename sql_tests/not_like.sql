-- title: NOT LIKE is the negation of LIKE
CREATE TABLE w (id INT, word STRING);
CREATE VIEW not_ending_t AS SELECT id FROM w WHERE word NOT LIKE '%t';
CREATE VIEW flags AS SELECT id, word NOT LIKE '%t' AS nl FROM w;
-- step
INSERT INTO w VALUES (1, 'cat'), (2, 'car'), (3, NULL);
-- step
DELETE FROM w WHERE id = 1;

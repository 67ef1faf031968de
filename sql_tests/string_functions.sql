-- title: upper, lower, length, substring, concat, ||, trim, replace
CREATE TABLE s (id INT, first STRING, last STRING, padded STRING);

CREATE VIEW names AS
SELECT id,
       upper(first) AS up,
       lower(last) AS low,
       length(first) AS len,
       substring(last, 2, 3) AS mid,
       concat(first, ' ', last) AS full_name,
       first || '-' || last AS dashed,
       trim(padded) AS trimmed,
       replace(last, 'o', '0') AS replaced
FROM s;
CREATE VIEW long_names AS SELECT id FROM s WHERE length(trim(padded)) > 3;

-- step
INSERT INTO s VALUES (1, 'Ada', 'Lovelace', '  ada  '), (2, 'Alan', 'Turing', 'alan ');
-- step
INSERT INTO s VALUES (3, NULL, 'Hopper', NULL), (4, 'Grace', NULL, '   g');
-- step
UPDATE s SET last = 'Church' WHERE id = 2;
-- step
DELETE FROM s WHERE first IS NULL;

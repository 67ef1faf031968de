-- title: COALESCE and NULLIF over NULLs
CREATE TABLE c (id INT, a INT, b INT, s STRING);

CREATE VIEW filled AS
SELECT id, COALESCE(a, b, -1) AS first_value, NULLIF(a, b) AS a_unless_b, COALESCE(s, 'n/a') AS label
FROM c;
CREATE VIEW nonzero AS SELECT id FROM c WHERE NULLIF(a, 0) IS NOT NULL;

-- step
INSERT INTO c VALUES (1, 1, 2, 'x'), (2, NULL, 3, NULL), (3, NULL, NULL, 'z');
-- step
INSERT INTO c VALUES (4, 5, 5, 'w'), (5, 0, 1, NULL);
-- step
UPDATE c SET a = 7 WHERE a IS NULL;
-- step
DELETE FROM c WHERE id <= 2;

-- title: AND / OR / NOT with NULLs follow three-valued logic, in WHERE and in SELECT
CREATE TABLE b (id INT, p BOOLEAN, q BOOLEAN);

CREATE VIEW truth AS
SELECT id, p AND q AS p_and_q, p OR q AS p_or_q, NOT p AS not_p, (p AND q) IS NULL AS and_unknown
FROM b;
CREATE VIEW where_and AS SELECT id FROM b WHERE p AND q;
CREATE VIEW where_or AS SELECT id FROM b WHERE p OR q;
CREATE VIEW where_not AS SELECT id FROM b WHERE NOT p;
CREATE VIEW where_not_or AS SELECT id FROM b WHERE NOT (p OR q);

-- step
INSERT INTO b VALUES (1, true, true), (2, true, false), (3, true, NULL);
-- step
INSERT INTO b VALUES (4, false, true), (5, false, false), (6, false, NULL);
-- step
INSERT INTO b VALUES (7, NULL, true), (8, NULL, false), (9, NULL, NULL);
-- step
UPDATE b SET p = NOT p WHERE p IS NOT NULL;
-- step
DELETE FROM b WHERE q IS NULL OR p IS NULL;

-- title: IS NULL and IS NOT NULL, in WHERE and as values
CREATE TABLE p (id INT, email STRING, phone STRING);

CREATE VIEW no_email AS SELECT id FROM p WHERE email IS NULL;
CREATE VIEW reachable AS SELECT id FROM p WHERE email IS NOT NULL OR phone IS NOT NULL;
CREATE VIEW flags AS SELECT id, email IS NULL AS missing_email, phone IS NOT NULL AS has_phone FROM p;

-- step
INSERT INTO p VALUES (1, 'a@x', NULL), (2, NULL, '555'), (3, NULL, NULL);
-- step
UPDATE p SET email = 'c@x' WHERE id = 3;
-- step
UPDATE p SET phone = NULL WHERE id = 2;
-- step
DELETE FROM p WHERE email IS NULL;

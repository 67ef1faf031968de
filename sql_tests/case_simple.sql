-- title: simple CASE x WHEN v THEN ..., NULL never matching a WHEN
CREATE TABLE items (id INT, kind STRING, qty INT);

CREATE VIEW labelled AS
SELECT id,
       CASE kind WHEN 'a' THEN 'apple' WHEN 'b' THEN 'banana' ELSE 'other' END AS label,
       CASE qty WHEN 0 THEN 'none' WHEN 1 THEN 'one' END AS amount
FROM items;

-- step
INSERT INTO items VALUES (1, 'a', 0), (2, 'b', 1), (3, 'c', 2);
-- step
INSERT INTO items VALUES (4, NULL, NULL), (5, 'a', 1);
-- step
UPDATE items SET kind = 'b' WHERE kind = 'a';
-- step
DELETE FROM items WHERE id IN (1, 4);

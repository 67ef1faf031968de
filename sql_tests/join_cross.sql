-- title: CROSS JOIN, with and without a filter on the product
CREATE TABLE sizes (size STRING);
CREATE TABLE colors (color STRING, rank INT);

CREATE VIEW variants AS SELECT s.size, c.color FROM sizes s CROSS JOIN colors c;
CREATE VIEW top_variants AS SELECT s.size, c.color FROM sizes s CROSS JOIN colors c WHERE c.rank <= 1;

-- step
INSERT INTO sizes VALUES ('S'), ('M');
-- step
INSERT INTO colors VALUES ('red', 1), ('blue', 2);
-- step
INSERT INTO sizes VALUES ('L'), ('S');
-- step
UPDATE colors SET rank = 0 WHERE color = 'blue';
-- step
DELETE FROM sizes WHERE size = 'S';

-- title: DECIMAL values as join and group keys, across different precisions and scales
CREATE TABLE p (price DECIMAL(6,2), item STRING);
CREATE TABLE band (price DECIMAL(8,3), label STRING);

CREATE VIEW labelled AS SELECT p.item, b.label FROM p JOIN band b ON p.price = b.price;
CREATE VIEW per_price AS SELECT price, COUNT(*) AS n FROM p GROUP BY price;

-- step
INSERT INTO p VALUES (1.50, 'a'), (1.50, 'b'), (2.00, 'c');
INSERT INTO band VALUES (1.500, 'low'), (2.001, 'odd');
-- step
INSERT INTO band VALUES (2.000, 'mid');
-- step
UPDATE p SET price = 2.00 WHERE item = 'a';
-- step
DELETE FROM band WHERE price = 1.5;

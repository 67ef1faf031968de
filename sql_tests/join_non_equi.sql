-- title: equi-join with an extra non-equi condition in ON, and a pure theta join
CREATE TABLE bids (item INT, bidder STRING, amount INT);
CREATE TABLE reserves (item INT, minimum INT);

CREATE VIEW winning AS
SELECT b.item, b.bidder, b.amount FROM bids b JOIN reserves r ON b.item = r.item AND b.amount >= r.minimum;
CREATE VIEW above_any AS
SELECT b.bidder, r.item FROM bids b JOIN reserves r ON b.amount > r.minimum * 10;

-- step
INSERT INTO bids VALUES (1, 'x', 50), (1, 'y', 150), (2, 'x', 20);
INSERT INTO reserves VALUES (1, 100), (2, 10);
-- step
INSERT INTO bids VALUES (2, 'z', 5), (3, 'y', 1000);
-- step
UPDATE reserves SET minimum = 40 WHERE item = 1;
-- step
DELETE FROM bids WHERE bidder = 'y';

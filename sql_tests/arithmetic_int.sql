-- title: integer arithmetic: + - * / (double) div % with negative operands
CREATE TABLE n (id INT, a INT, b INT);

CREATE VIEW ops AS
SELECT id, a + b AS plus, a - b AS minus, a * b AS times, a / b AS ratio, a div b AS quotient, a % b AS remainder, -a AS neg
FROM n;
CREATE VIEW evens AS SELECT id FROM n WHERE a % 2 = 0;

-- step
INSERT INTO n VALUES (1, 7, 2), (2, -7, 2), (3, 7, -2);
-- step
INSERT INTO n VALUES (4, 0, 5), (5, NULL, 3), (6, 9, NULL);
-- step
UPDATE n SET a = a * 2 WHERE a IS NOT NULL;
-- step
DELETE FROM n WHERE b < 0;

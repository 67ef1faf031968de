-- title: NULL join keys never match, on either side
CREATE TABLE l (k INT, a STRING);
CREATE TABLE r (k INT, b STRING);

CREATE VIEW j AS SELECT l.a, r.b FROM l JOIN r ON l.k = r.k;
CREATE VIEW null_safe AS SELECT l.a, r.b FROM l JOIN r ON l.k <=> r.k;

-- step
INSERT INTO l VALUES (1, 'l1'), (NULL, 'lnull'), (2, 'l2');
INSERT INTO r VALUES (1, 'r1'), (NULL, 'rnull');
-- step
INSERT INTO r VALUES (NULL, 'rnull2'), (2, 'r2');
-- step
UPDATE l SET k = NULL WHERE k = 1;
-- step
DELETE FROM r WHERE k IS NULL;

-- title: EXISTS, NOT EXISTS, IN and NOT IN subqueries, correlated by equality and by inequality, with NULLs on both sides and duplicate rows
CREATE TABLE o (id INT, k INT, v INT);
CREATE TABLE s (k INT, w INT);

CREATE VIEW ex AS SELECT id, k FROM o WHERE EXISTS (SELECT 1 FROM s WHERE s.k = o.k);
CREATE VIEW not_ex AS SELECT id, k FROM o WHERE NOT EXISTS (SELECT 1 FROM s WHERE s.k = o.k);
CREATE VIEW ex_lt AS SELECT id FROM o WHERE EXISTS (SELECT 1 FROM s WHERE s.w < o.v AND s.k = o.k);
CREATE VIEW ex_ineq AS SELECT id FROM o WHERE EXISTS (SELECT 1 FROM s WHERE s.w > o.v);
CREATE VIEW in_sub AS SELECT id, k FROM o WHERE k IN (SELECT k FROM s);
CREATE VIEW not_in AS SELECT id, k FROM o WHERE k NOT IN (SELECT k FROM s);
CREATE VIEW not_in_corr AS SELECT id FROM o WHERE k NOT IN (SELECT s.k FROM s WHERE s.w <> o.v);
CREATE VIEW in_mark AS SELECT id, COALESCE(k, -1) IN (SELECT k FROM s WHERE w > 0 AND k IS NOT NULL) AS m FROM o;
CREATE VIEW ex_uncorr AS SELECT id FROM o WHERE EXISTS (SELECT 1 FROM s WHERE w > 100) OR v = 1;

-- step
INSERT INTO o VALUES (1, 1, 1), (1, 1, 1), (2, 2, 5), (3, NULL, 7), (4, 4, NULL);
INSERT INTO s VALUES (1, 0), (1, 3), (2, 9);
-- step
INSERT INTO s VALUES (NULL, 2);
-- step
DELETE FROM s WHERE k IS NULL;
DELETE FROM s WHERE k = 2;
-- step
DELETE FROM s;
-- step
INSERT INTO s VALUES (2, 200), (4, 4), (4, 4);
-- step
DELETE FROM o WHERE id = 1;
INSERT INTO o VALUES (5, NULL, NULL);

-- title: JOIN ... USING and NATURAL JOIN: the join columns come first in * and in t.*, and an unqualified one means the side that has the row (both, for FULL)
-- oracle: spark
CREATE TABLE a (k INT, v INT, s STRING);
CREATE TABLE b (k INT, s STRING, w INT);
CREATE VIEW star_using AS SELECT * FROM a JOIN b USING (s, k);
CREATE VIEW natural_left AS SELECT * FROM a NATURAL LEFT JOIN b;
CREATE VIEW right_key AS SELECT k, a.v, b.w FROM a RIGHT JOIN b USING (k);
CREATE VIEW full_keys AS SELECT k, s, v, w FROM a NATURAL FULL JOIN b;
CREATE VIEW having_key AS SELECT v, COUNT(*) AS n FROM a FULL JOIN b USING (k) GROUP BY v HAVING MAX(k) > 1;
-- t.* lists t's join columns first, in the join's order, with t's own values
CREATE VIEW star_side AS SELECT a.*, b.w FROM a NATURAL JOIN b;
CREATE VIEW star_right_side AS SELECT 0 AS zero, b.*, 1 AS one FROM a LEFT JOIN b USING (k);
CREATE VIEW star_derived AS SELECT x.* FROM a JOIN (SELECT w, s, k FROM b) x USING (s);
CREATE VIEW qualify_key AS
  SELECT a.v, b.w FROM a JOIN b USING (k)
  QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY a.v, b.w) = 1;
-- step
INSERT INTO a VALUES (1, 10, 'x'), (2, 20, 'y'), (NULL, 30, 'z'), (3, 40, NULL);
INSERT INTO b VALUES (1, 'x', 100), (2, 'q', 200), (4, 'w', 400), (NULL, 'z', 500), (1, 'x', 101);
-- step
DELETE FROM a WHERE k = 1;
INSERT INTO a VALUES (4, 50, 'w'), (2, 21, 'q');
DELETE FROM b WHERE w = 500;
-- step
INSERT INTO b VALUES (3, NULL, 300);
DELETE FROM a WHERE v = 20;

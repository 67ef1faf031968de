-- title: searched CASE with and without ELSE, NULL conditions falling through
CREATE TABLE scores (name STRING, score INT);

CREATE VIEW graded AS
SELECT name,
       CASE WHEN score >= 90 THEN 'A' WHEN score >= 75 THEN 'B' WHEN score >= 50 THEN 'C' ELSE 'F' END AS grade,
       CASE WHEN score > 100 THEN 'bonus' END AS flag
FROM scores;

CREATE VIEW grade_counts AS
SELECT CASE WHEN score >= 50 THEN 'pass' ELSE 'fail' END AS outcome, COUNT(*) AS n
FROM scores
GROUP BY CASE WHEN score >= 50 THEN 'pass' ELSE 'fail' END;

-- step
INSERT INTO scores VALUES ('ann', 95), ('ben', 80), ('cat', 40);
-- step
INSERT INTO scores VALUES ('dan', NULL), ('eve', 105);
-- step
UPDATE scores SET score = 60 WHERE name = 'cat';
-- step
DELETE FROM scores WHERE score >= 90;

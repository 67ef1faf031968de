-- title: COUNT(DISTINCT x) per group and overall, with duplicates and NULLs
CREATE TABLE visits (page STRING, visitor STRING);

CREATE VIEW uniques AS SELECT page, COUNT(DISTINCT visitor) AS visitors, COUNT(*) AS hits FROM visits GROUP BY page;
CREATE VIEW all_uniques AS SELECT COUNT(DISTINCT visitor) AS visitors FROM visits;

-- step
INSERT INTO visits VALUES ('home', 'ann'), ('home', 'ann'), ('home', 'bob'), ('about', NULL);
-- step
INSERT INTO visits VALUES ('about', 'ann'), ('home', NULL);
-- step
DELETE FROM visits WHERE page = 'home' AND visitor = 'bob';
-- step
DELETE FROM visits WHERE visitor = 'ann';

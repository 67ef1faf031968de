-- title: bill of materials: total quantity of every part in every product (UNION ALL)
-- oracle: duckdb spark
CREATE TABLE bom (assembly STRING, part STRING, qty INT);
CREATE VIEW exploded AS
WITH RECURSIVE x(root, part, qty) AS (
  SELECT assembly, part, qty FROM bom
  UNION ALL
  SELECT x.root, b.part, x.qty * b.qty FROM x JOIN bom b ON x.part = b.assembly
)
SELECT root, part, SUM(qty) AS total FROM x GROUP BY root, part;
-- step
INSERT INTO bom VALUES ('bike', 'wheel', 2), ('wheel', 'spoke', 32), ('wheel', 'rim', 1), ('bike', 'frame', 1);
-- step
INSERT INTO bom VALUES ('frame', 'tube', 3), ('rim', 'bolt', 4);
-- step
UPDATE bom SET qty = 36 WHERE assembly = 'wheel' AND part = 'spoke';
-- step
INSERT INTO bom VALUES ('trailer', 'wheel', 2);
DELETE FROM bom WHERE assembly = 'bike' AND part = 'frame';

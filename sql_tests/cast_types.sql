-- title: CAST between integers, strings, decimals, doubles and dates
CREATE TABLE raw (id INT, n INT, txt STRING, d STRING, amount DECIMAL(8,3));

CREATE VIEW casts AS
SELECT id,
       CAST(n AS STRING) AS n_text,
       CAST(txt AS INT) AS txt_int,
       CAST(n AS DECIMAL(6,2)) AS n_dec,
       CAST(amount AS INT) AS amount_int,
       CAST(n AS DOUBLE) / 4 AS quarter,
       CAST(d AS DATE) AS day,
       CAST(n AS BIGINT) * 1000000000 AS big
FROM raw;

CREATE VIEW recent AS SELECT id FROM raw WHERE CAST(d AS DATE) >= DATE '2024-02-01';

-- step
INSERT INTO raw VALUES (1, 10, '42', '2024-01-15', 12.345), (2, -3, '-7', '2024-03-01', -0.500);
-- step
INSERT INTO raw VALUES (3, NULL, NULL, NULL, NULL), (4, 0, '0', '2024-02-01', 99.999);
-- step
UPDATE raw SET txt = '100' WHERE id = 1;
-- step
DELETE FROM raw WHERE id = 2;

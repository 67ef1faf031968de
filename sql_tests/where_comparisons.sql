-- title: WHERE with each comparison operator, on integers and strings, NULLs filtered out
CREATE TABLE t (id INT, n INT, s STRING);

CREATE VIEW eq AS SELECT id FROM t WHERE n = 2;
CREATE VIEW ne AS SELECT id FROM t WHERE n <> 2;
CREATE VIEW ne_bang AS SELECT id FROM t WHERE n != 2;
CREATE VIEW lt AS SELECT id, n FROM t WHERE n < 2;
CREATE VIEW le AS SELECT id, n FROM t WHERE n <= 2;
CREATE VIEW gt AS SELECT id, n FROM t WHERE n > 2;
CREATE VIEW ge AS SELECT id, n FROM t WHERE n >= 2;
CREATE VIEW str_lt AS SELECT id, s FROM t WHERE s < 'm';
CREATE VIEW col_col AS SELECT id FROM t WHERE n >= id;

-- step
INSERT INTO t VALUES (1, 1, 'apple'), (2, 2, 'melon'), (3, 3, 'zebra');
-- step
INSERT INTO t VALUES (4, NULL, 'kiwi'), (5, 2, NULL);
-- step
UPDATE t SET n = 5 WHERE id = 2;
-- step
DELETE FROM t WHERE n IS NULL OR s IS NULL;
-- step
DELETE FROM t WHERE id < 3;

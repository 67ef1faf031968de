-- title: a doubled quote inside a string literal is one quote, as in Spark ('it''s' is it's, "a""b" is a"b); adjacent literals are joined; backslash escapes
CREATE TABLE notes (id INT, body STRING);

CREATE VIEW quoted AS
SELECT id,
       body,
       'it''s' AS contraction,
       '''' AS one_quote,
       '' AS empty,
       'a' 'b' AS joined,
       'x\'y' AS backslashed,
       "say ""hi""" AS double_quoted,
       body = 'o''k' AS is_ok   -- a comment's quote: it's ignored
FROM notes;

-- step
INSERT INTO notes VALUES (1, 'o''k'), (2, 'plain');
-- step
UPDATE notes SET body = 'don''t' WHERE id = 2;

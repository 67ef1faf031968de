-- title: a malformed string beside an integer is a cast error that rejects the step (Spark: CAST_INVALID_INPUT)
CREATE TABLE u (s STRING, i INT);
CREATE VIEW v AS SELECT i + s AS p FROM u;
-- step
INSERT INTO u VALUES ('12', 1);
-- step
INSERT INTO u VALUES ('1.5', 2);

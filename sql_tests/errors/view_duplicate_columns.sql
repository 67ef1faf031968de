-- title: a view with two columns of one name is refused, as Spark refuses it (COLUMN_ALREADY_EXISTS)
CREATE TABLE u (i INT, j INT);
CREATE VIEW v AS SELECT i, j, I FROM u;

-- title: columns no reader uses are not computed (Spark's column pruning), so a cast that would fail there does not
-- oracle: spark
CREATE TABLE t (k INT, s STRING, n BIGINT);
CREATE TABLE u (k INT, w INT);
CREATE VIEW derived AS SELECT x.c0 FROM (SELECT k AS c0, CAST(s AS INT) AS c1 FROM t) x;
CREATE VIEW arms AS
  SELECT y.a, y.b FROM (SELECT k AS a, s AS b, CAST(n AS INT) AS c FROM t
                        UNION ALL SELECT k, CAST(w AS STRING), w FROM u) y;
CREATE VIEW joined AS
  SELECT x.k, u.w FROM (SELECT k, CAST(s AS INT) AS bad, s FROM t WHERE k > 0) x JOIN u ON x.k = u.k;
CREATE VIEW counted AS SELECT COUNT(*) AS n, SUM(x.k) AS total FROM (SELECT k, CAST(s AS INT) AS bad FROM t) x;
CREATE VIEW guarded AS SELECT x.k, x.i FROM (SELECT k, CAST(s AS INT) AS i, CAST(n AS INT) AS bad FROM t
  WHERE s RLIKE '^[0-9]+$') x;
-- step
INSERT INTO t VALUES (1, 'a', 5), (2, '12', 3000000000), (20, 'b', 7);
INSERT INTO u VALUES (1, 10), (2, 20), (3, 30);
-- step
DELETE FROM t WHERE k = 2;
INSERT INTO t VALUES (3, 'x', -1);

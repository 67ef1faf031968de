-- title: DISTINCT over a join, where many join matches produce the same output row
CREATE TABLE follows (src STRING, dst STRING);
CREATE TABLE likes (usr STRING, topic STRING);

CREATE VIEW followed_topics AS SELECT DISTINCT f.src, l.topic FROM follows f JOIN likes l ON f.dst = l.usr;

-- step
INSERT INTO follows VALUES ('ann', 'bob'), ('ann', 'cy');
INSERT INTO likes VALUES ('bob', 'sql'), ('cy', 'sql'), ('cy', 'go');
-- step
DELETE FROM likes WHERE usr = 'bob';
-- step
DELETE FROM follows WHERE dst = 'cy';
-- step
INSERT INTO follows VALUES ('ann', 'bob');
INSERT INTO likes VALUES ('bob', 'go');

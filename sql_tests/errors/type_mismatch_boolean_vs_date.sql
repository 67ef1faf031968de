-- title: comparing a BOOLEAN with a DATE is a type error
CREATE TABLE t (flag BOOLEAN, d DATE);
CREATE VIEW v AS SELECT d FROM t WHERE flag = d;

-- title: a date_format pattern letter outside the supported subset is refused where it stands
CREATE TABLE t (ts TIMESTAMP);
CREATE VIEW v AS SELECT date_format(ts, 'yyyy-MM-dd Q') AS f FROM t;

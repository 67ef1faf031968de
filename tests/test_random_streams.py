"""Random change streams through whole programs: incremental == recomputation, every step.

DBSP's correctness statement for a compiled view (Def 3.1, Algorithm 4.8): with
Q^Δ = D ∘ Q ∘ I, I(Q^Δ(Δ)) = Q(I(Δ)); the integral of the incremental circuit's output
deltas is the view over the integrated tables. Hypothesis draws change streams with
inserts (duplicates and NULLs included) and deletes of rows present (sometimes of every
row), and after EVERY step checks the integrated output of each view against

* DuckDB recomputing the view from the integrated tables (runtime/oracle.py), and
* the non-incremental pipeline, which runs the lifted circuit ↑Q on whole tables
  (its deltas must equal the incremental deltas, step by step).
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbspc.compiler.compile import Compiled, compile_sql
from dbspc.runtime.oracle import assert_same_rows, duckdb_views
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet
from tests.stepcheck import add, check_step

PROGRAM = """
CREATE TABLE a (k INT, v INT, s STRING);
CREATE TABLE b (k INT, w INT, s STRING);
CREATE TABLE c (s STRING, n BIGINT);

-- filter
CREATE VIEW filtered AS SELECT k, v FROM a WHERE v > 1 AND s IS NOT NULL;
-- projection with arithmetic, CASE and COALESCE
CREATE VIEW projected AS
  SELECT k, v * 2 + k AS v2,
         CASE WHEN v > 2 THEN 'hi' WHEN v IS NULL THEN 'none' ELSE 'lo' END AS band,
         COALESCE(s, '?') AS s
  FROM a;
-- equi-join (NULL keys never match)
CREATE VIEW equi AS SELECT a.k, a.v, b.w, b.s FROM a JOIN b ON a.k = b.k;
-- equi-join with a non-equi residual
CREATE VIEW residual AS SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k AND a.v < b.w;
-- a join on an inequality only
CREATE VIEW theta AS SELECT a.v, b.w FROM a JOIN b ON a.v > b.w + 1;
-- cross join
CREATE VIEW crossed AS SELECT a.s AS sa, c.s AS sc, c.n FROM a CROSS JOIN c WHERE a.k IS NOT NULL;
-- set operations
CREATE VIEW u AS SELECT k, s FROM a UNION SELECT k, s FROM b;
CREATE VIEW ua AS SELECT k, s FROM a UNION ALL SELECT k, s FROM b;
CREATE VIEW ex AS SELECT k, s FROM a EXCEPT SELECT k, s FROM b;
CREATE VIEW inter AS SELECT k, s FROM a INTERSECT SELECT k, s FROM b;
CREATE VIEW dist AS SELECT DISTINCT s, v FROM a;
CREATE VIEW moments AS SELECT s, stddev(v) AS sd, var_pop(v) AS vp FROM a GROUP BY s;
CREATE VIEW ex_all AS SELECT k, s FROM a EXCEPT ALL SELECT k, s FROM b;
CREATE VIEW inter_all AS SELECT k, s FROM a INTERSECT ALL SELECT k, s FROM b;
-- GROUP BY with every aggregate, and HAVING
CREATE VIEW grouped AS
  SELECT s, COUNT(*) AS n, COUNT(v) AS nv, SUM(v) AS sv, AVG(v) AS av, MIN(v) AS lo, MAX(v) AS hi,
         COUNT(DISTINCT v) AS dv
  FROM a GROUP BY s HAVING COUNT(*) > 1;
-- aggregates of one column's distinct values alone: over the distinct (group, value) pairs
CREATE VIEW distinct_aggs AS SELECT k, COUNT(DISTINCT s) AS ds, MIN(s) AS lo, MAX(s) AS hi FROM a GROUP BY k;
CREATE VIEW distinct_sums AS
  SELECT s, SUM(DISTINCT v) AS sv, AVG(DISTINCT v) AS av, COUNT(DISTINCT v) AS n FROM a GROUP BY s;
CREATE VIEW distinct_total AS SELECT COUNT(DISTINCT w) AS n, AVG(DISTINCT w) AS aw FROM b;
-- ... beside other aggregates: the pairs of each DISTINCT argument added to the rows
CREATE VIEW mixed_total AS SELECT COUNT(*) AS n, COUNT(DISTINCT s) AS ds, SUM(DISTINCT k) AS sk, MAX(w) AS hi FROM b;
CREATE VIEW mixed_by_k AS
  SELECT k, COUNT(*) AS n, COUNT(DISTINCT s) AS ds, AVG(DISTINCT w) AS aw, SUM(w) AS sw FROM b GROUP BY k;
-- global aggregate: one row even when b is empty
CREATE VIEW total AS SELECT COUNT(*) AS n, SUM(w) AS sw, MIN(w) AS lo, MAX(w) AS hi, AVG(w) AS aw FROM b;
-- views over views
CREATE VIEW bands AS SELECT band, COUNT(*) AS n, SUM(v2) AS sv FROM projected GROUP BY band;
CREATE VIEW per_key AS SELECT e.k, COUNT(*) AS n, MAX(e.w) AS mw FROM equi e GROUP BY e.k;
CREATE VIEW grouped_c AS SELECT g.s, g.n, c.n AS cn FROM grouped g JOIN c ON g.s = c.s;
CREATE VIEW dist_of_union AS SELECT DISTINCT k FROM u WHERE k > 0;
-- window functions and top-k. Ties are frequent here, so each view selects only what is
-- a function of the partitions whatever order SQL gives tied rows (rows tied on the
-- ORDER BY keys are equal on every selected column), and DuckDB can judge it.
CREATE VIEW numbered AS
  SELECT k, v, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v, s) AS rn,
         LAG(v, 1, -1) OVER (PARTITION BY k ORDER BY v, s) AS pv,
         LEAD(s) OVER (PARTITION BY k ORDER BY v DESC, s) AS ns
  FROM a;
CREATE VIEW win_join AS
  SELECT a.k, b.w, RANK() OVER (PARTITION BY a.k ORDER BY b.w DESC) AS r,
         SUM(b.w) OVER (PARTITION BY a.k ORDER BY b.w) AS run, COUNT(*) OVER (PARTITION BY b.s) AS ns
  FROM a JOIN b ON a.k = b.k;
CREATE VIEW win_agg AS
  SELECT s, COUNT(*) AS n, DENSE_RANK() OVER (ORDER BY COUNT(*) DESC) AS dr,
         SUM(SUM(v)) OVER (ORDER BY s) AS run
  FROM a GROUP BY s;
CREATE VIEW moving AS
  SELECT s, v, SUM(v) OVER (PARTITION BY s ORDER BY v ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s3,
         MIN(v) OVER (PARTITION BY s ORDER BY v DESC) AS lo, MAX(v) OVER (PARTITION BY s) AS hi,
         MAX(v) OVER (PARTITION BY s ORDER BY v ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS before2,
         MIN(v) OVER (PARTITION BY s ORDER BY v ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) AS next3
  FROM a;
CREATE VIEW ranged AS
  SELECT s, k, SUM(v) OVER (PARTITION BY s ORDER BY k RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS near,
         COUNT(*) OVER (PARTITION BY s ORDER BY k DESC RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS above
  FROM a;
CREATE VIEW ranked_dist AS
  SELECT k, v, s, PERCENT_RANK() OVER (PARTITION BY k ORDER BY v) AS pr,
         CUME_DIST() OVER (PARTITION BY k ORDER BY v DESC) AS cd, NTILE(2) OVER (PARTITION BY k ORDER BY v, s) AS half,
         FIRST_VALUE(s) IGNORE NULLS OVER (PARTITION BY k ORDER BY v, s) AS fs,
         LAST_VALUE(v) OVER (PARTITION BY k ORDER BY v, s ROWS BETWEEN UNBOUNDED PRECEDING
                             AND UNBOUNDED FOLLOWING) AS lv,
         NTH_VALUE(v, 2) OVER (PARTITION BY k ORDER BY v, s) AS second
  FROM a;
CREATE VIEW top3 AS SELECT v, k FROM a ORDER BY v DESC, k LIMIT 3;
CREATE VIEW top_groups AS SELECT s, sv FROM grouped ORDER BY sv DESC, s LIMIT 2 OFFSET 1;
CREATE VIEW best_w AS SELECT k, w FROM b QUALIFY RANK() OVER (PARTITION BY k ORDER BY w DESC) = 1;
CREATE VIEW best_per_k AS
  SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM a) t WHERE rn <= 2;
-- top-k (the topk operator) over a join and over an aggregate
CREATE VIEW top_join AS SELECT a.k, b.w FROM a JOIN b ON a.k = b.k ORDER BY b.w DESC, a.k LIMIT 2 OFFSET 1;
CREATE VIEW top_count_per_s AS
  SELECT s, k, n FROM (
    SELECT s, k, COUNT(*) AS n, ROW_NUMBER() OVER (PARTITION BY s ORDER BY COUNT(*) DESC, k NULLS LAST) AS rn
    FROM a GROUP BY s, k
  ) t WHERE rn <= 2;
-- outer joins (NULL-padded unmatched rows), and aggregates over them
CREATE VIEW lefty AS SELECT a.k, a.v, b.w FROM a LEFT JOIN b ON a.k = b.k AND a.v < b.w;
CREATE VIEW fully AS SELECT a.s AS sa, a.v, b.s AS sb FROM a FULL JOIN b ON a.s = b.s;
CREATE VIEW left_counts AS SELECT a.k, COUNT(b.w) AS n, SUM(b.w) AS sw FROM a LEFT JOIN b ON a.k = b.k GROUP BY a.k;
-- subqueries: correlated EXISTS, NOT IN with NULLs, scalar aggregates (COUNT of nothing is 0)
CREATE VIEW semi AS SELECT k, v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.w > a.v);
CREATE VIEW anti_in AS SELECT k, v FROM a WHERE v NOT IN (SELECT w FROM b WHERE b.s = a.s);
CREATE VIEW scalar_cnt AS
  SELECT s, COUNT(*) AS n, SUM(v) AS sv FROM a WHERE v >= (SELECT COUNT(*) FROM b WHERE b.k = a.k) GROUP BY s;
CREATE VIEW scalar_sel AS SELECT k, (SELECT MAX(w) FROM b WHERE b.w < a.v) AS m FROM a;
-- subqueries over grouped rows (HAVING; the SELECT list, with an outer aggregate) and in ON
CREATE VIEW having_sub AS
  SELECT k, SUM(v) AS sv FROM a GROUP BY k HAVING COUNT(*) > (SELECT COUNT(*) FROM b WHERE b.k = a.k);
CREATE VIEW grouped_sub AS
  SELECT s, COUNT(*) AS n, (SELECT MAX(w) FROM b WHERE b.s = a.s AND b.w <= MAX(a.v)) AS m FROM a GROUP BY s;
CREATE VIEW on_sub AS SELECT a.k, b.w FROM a JOIN b ON a.k = b.k AND b.w IN (SELECT n FROM c);
-- collect_list / collect_set (arrays sorted), and a view reading them
CREATE VIEW collected AS
  SELECT k, collect_list(v) AS vs, collect_set(s) AS ss, SIZE(collect_set(v)) AS nd FROM a GROUP BY k;
CREATE VIEW collected_3 AS SELECT k, vs FROM collected WHERE array_contains(vs, 3);
"""

Row = tuple[Any, ...]
Step = dict[str, list[tuple[Row, int]]]


def _maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values)


KEY = _maybe(st.integers(0, 2))
NUM = _maybe(st.integers(0, 4))
TAG = _maybe(st.sampled_from(["x", "y"]))
COLUMNS: dict[str, tuple[st.SearchStrategy[Any], ...]] = {
    "a": (KEY, NUM, TAG),
    "b": (KEY, NUM, TAG),
    "c": (TAG, _maybe(st.integers(-2, 2))),
}


@st.composite
def change_streams(draw: st.DrawFn, max_steps: int = 5) -> list[Step]:
    """Per step and table: deletes of present rows (a random subset of the copies
    present, or sometimes all of them), then inserts of random rows (small domains, so
    duplicates and re-inserts of deleted rows are common)."""
    present: dict[str, Counter[Row]] = {t: Counter() for t in COLUMNS}
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, max_steps))):
        step: Step = {}
        for table, columns in COLUMNS.items():
            if not draw(st.integers(0, 3)):
                continue  # this table does not change in this step
            changes: list[tuple[Row, int]] = []
            have = sorted(present[table].elements(), key=repr)
            if have:
                if draw(st.integers(0, 4)) == 0:
                    chosen = list(range(len(have)))  # delete every row
                else:
                    chosen = draw(st.lists(st.integers(0, len(have) - 1), unique=True, max_size=len(have)))
                changes += [(have[i], -1) for i in chosen]
            changes += [(row, 1) for row in draw(st.lists(st.tuples(*columns), max_size=5))]
            for row, w in changes:
                present[table][row] += w
            step[table] = changes
        steps.append(step)
    return steps


@cache
def compiled(incremental: bool) -> Compiled:
    """Compiled once; every example gets fresh Pipelines (fresh state) over it."""
    return compile_sql(PROGRAM, incremental=incremental)


def as_zsets(p: Pipeline, step: Step) -> dict[str, ZSet]:
    return {t: ZSet.from_rows([r for r, _ in ch], p.table_types(t), [w for _, w in ch]) for t, ch in step.items()}


def test_every_view_kind_is_covered() -> None:
    """The program exercises the operators this file is meant to test."""
    inc = compiled(True).circuit
    kinds = Counter(inc[n].kind for n in inc.live())
    # a⋈b on k (shared by equi and residual), a×b (theta), a×c, grouped⋈c: 3 terms each
    assert kinds["join"] >= 3 * 4
    assert kinds["distinct_h"] >= 5 and kinds["aggregate_incremental"] >= 4
    assert kinds["negate"] >= 2 and kinds["filter"] >= 3 and kinds["positive_part_h"] >= 1
    assert kinds["window_incremental"] >= 5 and kinds["topk_incremental"] >= 5
    full = compiled(False).circuit
    full_kinds = Counter(full[n].kind for n in full.live())
    assert (
        not full.incremental and full_kinds["distinct"] >= 5 and full_kinds["window"] >= 5 and full_kinds["topk"] >= 5
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stream=change_streams())
def test_incremental_views_match_recomputation(stream: list[Step]) -> None:
    """I(Q^Δ(Δ))[t] = Q(I(Δ)[t]) for every view and every step t (Algorithm 4.8), with
    Q evaluated by DuckDB and by the lifted circuit; the incremental and lifted
    pipelines also agree on every step's delta."""
    inc = Pipeline(compiled(True))
    full = Pipeline(compiled(False))
    views = inc.view_names()
    integrated = {v: ZSet.empty(inc.view_types(v)) for v in views}
    tables: dict[str, Counter[Row]] = {t: Counter() for t in COLUMNS}
    for number, step in enumerate(stream, start=1):
        deltas = inc.step(as_zsets(inc, step))
        full_deltas = full.step(as_zsets(full, step))
        for table, changes in step.items():
            for row, w in changes:
                tables[table][row] += w
        for table, rows in tables.items():
            assert dict(inc.table_contents(table).to_rows()) == +rows, f"step {number}: table {table}"

        expected = duckdb_views(inc, {t: inc.table_contents(t) for t in COLUMNS})
        check_step(integrated, deltas, full_deltas, expected, f"step {number}")


@settings(max_examples=10, deadline=None)
@given(stream=change_streams(max_steps=4))
def test_undoing_every_change_empties_every_view(stream: list[Step]) -> None:
    """D and I are inverse (Thm 2.22): replaying the negated changes in reverse order
    brings every table back to empty and every view's integral back to its value on
    empty tables (a global aggregate keeps its one row)."""
    inc = Pipeline(compiled(True))
    views = inc.view_names()
    integrated = {v: ZSet.empty(inc.view_types(v)) for v in views}
    undo = [{t: [(row, -w) for row, w in ch] for t, ch in step.items()} for step in reversed(stream)]
    for step in [*stream, *undo]:
        for view, delta in inc.step(as_zsets(inc, step)).items():
            integrated[view] = add(integrated[view], delta)
    empty = duckdb_views(inc, {})
    for view in views:
        assert_same_rows(integrated[view], empty[view], f"view {view} after undoing everything")
    assert all(len(inc.table_contents(t)) == 0 for t in COLUMNS)

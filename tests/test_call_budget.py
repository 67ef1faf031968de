"""A step's Python-level calls stay within a budget (issue 10).

A small step's time is mostly the fixed cost of each call, a polars or numpy call of
10-50 us around a compiled kernel, and the wall clock on a shared machine moves too much
to notice a few more. The number of calls does not move: with the pinned polars and numpy
it is exact from run to run. So a change that adds calls to every step (a per-run loop, a
polars query where a numpy view served, a property read in a loop) fails here instead of
hiding in a noisy benchmark. The budgets are the counts of 2026-11-25 (bench/calls_per_step.py)
with ~20% headroom; lower them when a change lowers the counts.
"""

from __future__ import annotations

import pytest

from bench.calls_per_step import counted, join_groupby, pydbsp_join, recursion


@pytest.mark.parametrize(
    ("workload", "calls", "library_calls"),
    [
        # 1k-row changes (half deletes) to the join + GROUP BY view over 20,000 orders: 1,743
        # and 399 (1,862 and 426 before the group table grouped a step's rows in one call,
        # GroupSums.gather; 3,021 and 761 on 2026-11-25)
        ("join_groupby", 2_100, 480),
        # the transitive closure over 2,000 nodes: 1,079 and 239 (1,781 and 233 when its loop
        # was first compiled, runtime/nested_compiled.py; 21,186 and 6,475 before)
        ("closure", 1_400, 300),
        # 1k-row changes (half deletes) to both tables of pydbsp's join, 20,000 rows each:
        # 3,313 and 934 (3,595 and 1,060 before a change was hashed by its key once, a
        # column's dtype tested by one set lookup and a batch's layout cached by its types)
        ("pydbsp_join", 4_200, 1_200),
    ],
)
def test_a_step_makes_no_more_calls_than_its_budget(workload: str, calls: int, library_calls: int) -> None:
    if workload == "join_groupby":
        steps = join_groupby(20_000, 10)
    elif workload == "pydbsp_join":
        steps = pydbsp_join(20_000, 10)
    else:
        steps = recursion("tc", 2_000, 10)
    made = counted(steps)
    assert made["calls"] <= calls, made
    assert made["library_calls"] <= library_calls, made
    assert made["calls"] > calls // 2, f"{made}: far under the budget, lower it"

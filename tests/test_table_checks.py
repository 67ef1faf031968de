"""A table's delete checks read the join's integral of the table when the circuit keeps
one (runtime/pipeline.py): the table is held once, the checks stay exact, a refused
batch changes nothing, and checkpoints save the shared trace once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.errors import InputError
from dbspc.compiler.types import INT, STRING
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.refresh.checkpoint import Manifest, StateStore
from dbspc.runtime.zset import ZSet
from tests.collisions import colliding_hashes

PROGRAM = """
CREATE TABLE orders (id INT, customer INT, note STRING);
CREATE TABLE customers (id INT, region INT);
CREATE VIEW per_region AS
SELECT c.region, COUNT(*) AS n FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.region;
CREATE VIEW notes AS SELECT DISTINCT note FROM orders;
"""
ORDERS = (INT, INT, STRING)


def counts(z: ZSet) -> Counter[tuple[Any, ...]]:
    return Counter(dict(z.to_rows()))


def test_a_joined_table_is_held_once_by_the_join_integral() -> None:
    p = Pipeline.from_sql(PROGRAM)
    integrals = p.executor.traces()
    assert any(t is p.tables["orders"] for t in integrals.values())
    assert any(t is p.tables["customers"] for t in integrals.values())
    assert p.tables_apart() == {}
    names = p.state_traces()
    assert len({id(t) for t in names.values()}) == len(names)  # each trace saved once
    assert set(p.state_aliases().values()) == {"table.orders", "table.customers"}
    # the lifted circuit has no integrals: its tables are held apart
    assert len(Pipeline.from_sql(PROGRAM, incremental=False).tables_apart()) == 2


def test_a_table_only_filtered_keeps_its_own_index() -> None:
    p = Pipeline.from_sql("CREATE TABLE t (a INT, b INT); CREATE VIEW v AS SELECT a FROM t WHERE b > 0;")
    assert len(p.tables_apart()) == 1
    p.step({"t": ZSet.from_rows([(1, 1)], (INT, INT))})
    with pytest.raises(InputError, match="cannot delete 1 row"):
        p.step({"t": ZSet.from_rows([(1, 2)], (INT, INT), [-1])})


def test_the_report_says_how_each_table_is_held() -> None:
    from dbspc.compiler.circuit.report import to_report
    from dbspc.compiler.compile import compile_sql

    joined = to_report(compile_sql(PROGRAM, "spark", True).circuit)
    assert "-- table customers: held once, as %" in joined and "-- table orders: held once, as %" in joined
    filtered = to_report(compile_sql("CREATE TABLE t (a INT); CREATE VIEW v AS SELECT a FROM t WHERE a > 0;").circuit)
    assert "-- table t: a whole-row index of its own for delete checks, O(C log R) to insert" in filtered
    assert "-- table" not in to_report(compile_sql(PROGRAM, "spark", False).circuit)  # (the lifted circuit)


row_st = st.tuples(st.integers(0, 4), st.integers(0, 2), st.sampled_from(["x", "y", None]))


@settings(max_examples=40, deadline=None)
@given(
    batches=st.lists(st.lists(st.tuples(row_st, st.integers(-2, 2).filter(bool)), max_size=6), max_size=8),
    collide=st.sampled_from([None, 1, 2]),
)
def test_deletes_are_checked_exactly_through_the_join_integral(
    batches: list[list[tuple[tuple[Any, ...], int]]], collide: int | None
) -> None:
    """Random batches, some deleting rows that are not there: a batch is refused exactly
    when it would leave a row with a negative count, and a refused batch changes no
    table, view or operator state (many rows share a customer, the join's key)."""
    with colliding_hashes(collide):
        p = Pipeline.from_sql(PROGRAM)
        p.step({"customers": ZSet.from_rows([(0, 10), (1, 10), (2, 20)], (INT, INT))})
        held: Counter[tuple[Any, ...]] = Counter()
        views: dict[str, Counter[tuple[Any, ...]]] = {"per_region": Counter(), "notes": Counter()}
        for batch in batches:
            change: Counter[tuple[Any, ...]] = Counter()
            for row, w in batch:
                change[row] += w
            after = Counter(held)
            after.update(change)  # (Counter.update adds, negative counts included)
            z = ZSet.from_rows(list(change), ORDERS, list(change.values()))
            if any(w < 0 for w in after.values()):
                with pytest.raises(InputError, match="cannot delete"):
                    p.step({"orders": z})
            else:
                out = p.step({"orders": z})
                held = Counter({r: w for r, w in after.items() if w})
                for name, delta in out.items():
                    views[name].update(counts(delta))
            assert counts(p.table_contents("orders")) == held
        # the views integrate to their recomputation over what was accepted
        fresh = Pipeline.from_sql(PROGRAM)
        fresh.step({"customers": ZSet.from_rows([(0, 10), (1, 10), (2, 20)], (INT, INT))})
        whole = fresh.step({"orders": ZSet.from_rows(list(held), ORDERS, list(held.values()))})
        for name, delta in whole.items():
            assert +views[name] == counts(delta)


def test_an_older_checkpoint_holding_a_table_twice_loads(tmp_path: Path) -> None:
    """Checkpoints before the tables were shared saved a joined table under its own name
    and its integral's: loading skips the second copy."""
    p = Pipeline.from_sql(PROGRAM)
    p.step({"customers": ZSet.from_rows([(0, 10)], (INT, INT))})
    p.step({"orders": ZSet.from_rows([(1, 0, "x"), (2, 0, None)], ORDERS)})
    traces = p.state_traces()
    older = {**traces, **{alias: traces[name] for alias, name in p.state_aliases().items()}}
    section, _ = StateStore(tmp_path).save(1, older)
    manifest = Manifest(refresh_id=1, program_hash="", program={}, state=section, pipeline=p.state_meta())
    back = Pipeline.from_sql(PROGRAM)
    StateStore(tmp_path).load(manifest, back.state_traces(), back.state_aliases())
    back.restored(manifest.pipeline)
    assert counts(back.table_contents("orders")) == counts(p.table_contents("orders"))
    out = back.step({"orders": ZSet.from_rows([(1, 0, "x")], ORDERS, [-1])})
    assert counts(out["per_region"]) == Counter({(10, 2): -1, (10, 1): 1})
    with pytest.raises(InputError, match="cannot delete"):
        back.step({"orders": ZSet.from_rows([(1, 0, "x")], ORDERS, [-1])})

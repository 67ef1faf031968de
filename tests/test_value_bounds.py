"""Checks proven unable to fire (runtime/value_bounds.py): which calls a batch's intervals
prove, and that evaluating without their checks changes no value and no error."""

from __future__ import annotations

import functools
import itertools
from decimal import Decimal
from typing import Any
from unittest import mock

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbspc.compiler.errors import RuntimeSqlError
from dbspc.compiler.logical.scalar import Call, Col, Lit, Scalar
from dbspc.compiler.types import BIGINT, BOOLEAN, DOUBLE, INT, INTEGER_BOUNDS, SMALLINT, TINYINT, SqlType, decimal
from dbspc.runtime import expressions, value_bounds
from dbspc.runtime.expressions import compile_scalars, evaluate
from dbspc.runtime.value_bounds import NONE_PROVEN, proven
from dbspc.runtime.zset import ZSet

# one column of each integer type: c0 TINYINT, c1 SMALLINT, c2 INT, c3 BIGINT
TYPES = (TINYINT, SMALLINT, INT, BIGINT)


def call(fn: str, t: SqlType, *args: Scalar) -> Call:
    return Call(t, fn, tuple(args))


def frame(*columns: list[int | None]) -> pl.DataFrame:
    rows = list(zip(*columns, strict=True))
    return ZSet.from_rows(rows, TYPES[: len(columns)]).frame


def test_small_values_prove_every_operator() -> None:
    f = frame([1, 2], [3, -4], [5, None], [7, 8])
    a, b = Col(INT, 2), Col(BIGINT, 3)
    widened = call("cast", BIGINT, a)
    total = call("add", BIGINT, widened, call("mul", BIGINT, b, Lit(BIGINT, 3)))
    exprs = [call("neg", BIGINT, total), call("abs", INT, a), call("int_div", BIGINT, b, Lit(BIGINT, -2))]
    assert proven(f, exprs) == {total, total.args[1], widened, *exprs}
    _, checks = compile_scalars(exprs, proven(f, exprs))
    assert checks == []
    assert evaluate(f, exprs, "v").rows() == [(-26, 5, -3, 1), (None, None, -4, 1)]


def test_a_result_past_its_type_is_not_proven() -> None:
    hi = INTEGER_BOUNDS["INT"][1]
    a = Col(INT, 2)
    plus_one = call("add", INT, a, Lit(INT, 1))
    f = frame([0, 0], [0, 0], [hi, 0], [0, 0])
    assert proven(f, [plus_one]) == NONE_PROVEN
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        evaluate(f, [plus_one], "v")
    # one below the limit is proven, and computed exactly
    g = frame([0, 0], [0, 0], [hi - 1, -5], [0, 0])
    assert proven(g, [plus_one]) == {plus_one}
    assert evaluate(g, [plus_one], "v")["c0"].to_list() == [hi, -4]


def test_a_parent_of_an_unproven_call_is_proven_only_on_the_clipped_interval() -> None:
    # a * 2 may overflow BIGINT (it keeps its check); (a * 2) div 2^62 then lies in [-2, 2]
    lo, hi = INTEGER_BOUNDS["BIGINT"]
    a = Col(BIGINT, 3)
    doubled = call("mul", BIGINT, a, Lit(BIGINT, 2))
    narrowed = call("cast", TINYINT, call("int_div", BIGINT, doubled, Lit(BIGINT, 2**62)))
    f = frame([0, 0], [0, 0], [0, 0], [hi, 1])
    assert doubled not in proven(f, [narrowed])
    assert narrowed in proven(f, [narrowed])
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        evaluate(f, [narrowed], "v")
    assert evaluate(frame([0], [0], [0], [lo // 2]), [narrowed], "v")["c0"].to_list() == [-2]


def test_divisors() -> None:
    f = frame([1, 2], [0, 5], [3, 4], [-1, 9])
    by_column = call("int_div", INT, Col(INT, 2), call("cast", INT, Col(SMALLINT, 1)))
    by_positive = call("int_div", INT, Col(INT, 2), call("cast", INT, Col(TINYINT, 0)))
    by_zero_literal = call("div", DOUBLE, Col(INT, 2), Lit(INT, 0))
    by_decimal_literal = call("div", DOUBLE, Col(INT, 2), Lit(DOUBLE, 0.5))
    got = proven(f, [by_column, by_positive, by_zero_literal, by_decimal_literal])
    assert by_column not in got and by_zero_literal not in got
    assert by_positive in got and by_decimal_literal in got
    # the lowest value divided by -1 does not fit; any other quotient does
    lo = INTEGER_BOUNDS["INT"][0]
    q = call("int_div", INT, Col(INT, 2), Lit(INT, -1))
    assert q not in proven(frame([0], [0], [lo], [0]), [q])
    assert q in proven(frame([0], [0], [lo + 1], [0]), [q])
    # a decimal divisor below 1 makes the quotient larger than the dividend
    big = call("int_div", BIGINT, Col(BIGINT, 3), Lit(decimal(3, 2), Decimal("0.25")))
    assert big not in proven(frame([0], [0], [0], [2**62]), [big])
    with pytest.raises(RuntimeSqlError, match="integer overflow"):
        evaluate(frame([0], [0], [0], [2**62]), [big], "v")
    # an integer quotient is proven only for operands exact in a double (within 2^52)
    q = call("int_div", BIGINT, Col(BIGINT, 3), Lit(BIGINT, 3))
    assert q in proven(frame([0], [0], [0], [2**52]), [q])
    assert q not in proven(frame([0], [0], [0], [2**52 + 1]), [q])


def test_columns_of_nulls_and_empty_batches() -> None:
    a = Col(BIGINT, 3)
    square = call("mul", BIGINT, a, a)
    assert proven(frame([1], [1], [1], [None]), [square]) == {square}
    assert proven(frame([1], [1], [1], [None]).head(0), [square]) == NONE_PROVEN
    # no call a proof could relieve: nothing is computed
    assert proven(frame([1], [1], [1], [2]), [call("eq", BOOLEAN, a, a)]) == NONE_PROVEN


def _exact(fn: str, x: int, y: int) -> int | None:
    """fn's exact value on integers, None for a division by zero."""
    if fn in ("int_div", "mod"):
        if y == 0:
            return None
        q = -(abs(x) // abs(y)) if (x < 0) != (y < 0) else abs(x) // abs(y)
        return q if fn == "int_div" else x - q * y
    return {"add": x + y, "sub": x - y, "mul": x * y, "neg": -x, "abs": abs(x)}[fn]


@pytest.mark.parametrize("t", [TINYINT, BIGINT])
@pytest.mark.parametrize("fn", ["add", "sub", "mul", "neg", "abs", "int_div", "mod"])
def test_every_proof_holds_on_every_row_of_boundary_batches(fn: str, t: SqlType) -> None:
    """Every two-row batch of values at and near t's limits: where a call is proven, its
    exact value on each row fits t (and no divisor is zero)."""
    lo, hi = INTEGER_BOUNDS[t.kind]
    values = [lo, lo + 1, -2, -1, 0, 1, hi - 1, hi] + ([2**52 + 1] if t == BIGINT else [])
    a, b = Col(t, 0), Col(t, 1)
    expr = call(fn, t, a) if fn in ("neg", "abs") else call(fn, t, a, b)
    seen = 0
    for x1, y1, x2, y2 in itertools.product(values, repeat=4):
        f = ZSet.from_rows([(x1, y1), (x2, y2)], [t, t]).frame
        if expr not in proven(f, [expr]):
            continue
        seen += 1
        for x, y in ((x1, y1), (x2, y2)):
            exact = _exact(fn, x, y)
            assert exact is not None and lo <= exact <= hi, (fn, t, x1, y1, x2, y2)
    assert seen > 0


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.one_of(st.integers(-(2**52), 2**52), st.sampled_from([2**52, -(2**52), 2**52 - 1, 7, -7])),
            st.one_of(st.integers(1, 2**52), st.integers(1, 9), st.sampled_from([2**52, 3])),
        ),
        min_size=1,
        max_size=8,
    ),
    negative=st.booleans(),
)
def test_proven_quotients_and_remainders_are_exact(pairs: list[tuple[int, int]], negative: bool) -> None:
    """Proven integer quotients and remainders, computed in 64 bits, are exact for operands
    within 2^52: truncated toward zero, the remainder with the dividend's sign. (Divisors
    of one sign: an interval holding both signs holds 0, and proves nothing.)"""
    pairs = list(dict.fromkeys((a, -b if negative else b) for a, b in pairs))
    f = ZSet.from_rows(pairs, [BIGINT, BIGINT]).frame
    q = call("int_div", BIGINT, Col(BIGINT, 0), Col(BIGINT, 1))
    r = call("mod", BIGINT, Col(BIGINT, 0), Col(BIGINT, 1))
    assert proven(f, [q, r]) == {q, r}
    got = evaluate(f, [q, r], "v").rows()
    assert sorted(got) == sorted((_exact("int_div", a, b), _exact("mod", a, b), 1) for a, b in pairs)
    # and by a constant divisor (polars divides doubles by a constant through its
    # reciprocal: 5782.0 / -98.0 would truncate to -58)
    for _, b in pairs[:2]:
        qc = call("int_div", BIGINT, Col(BIGINT, 0), Lit(BIGINT, b))
        rc = call("mod", BIGINT, Col(BIGINT, 0), Lit(BIGINT, b))
        assert proven(f, [qc, rc]) == {qc, rc}
        got = evaluate(f, [qc, rc], "v").rows()
        assert sorted(got) == sorted((_exact("int_div", a, b), _exact("mod", a, b), 1) for a, _ in pairs)
    # one past 2^52 is not proven (the 128-bit formula runs)
    g = ZSet.from_rows([(2**52 + 1, 3)], [BIGINT, BIGINT]).frame
    assert proven(g, [q, r]) == NONE_PROVEN
    assert evaluate(g, [q, r], "v").rows() == [((2**52 + 1) // 3, (2**52 + 1) % 3, 1)]


# ---------------------------------------------------------------------------
# evaluating with the proof changes nothing


def _edges(t: SqlType) -> st.SearchStrategy[int | None]:
    lo, hi = INTEGER_BOUNDS[t.kind]
    near_double = [v for k in (-1, 0, 1) for v in (2**52 + k, -(2**52) - k) if lo <= v <= hi]
    return st.one_of(
        st.none(),
        st.integers(-30, 30),
        st.sampled_from([lo, lo + 1, hi - 1, hi, lo // 2, hi // 2, -1, 0, 1, *near_double]),
        st.integers(lo, hi),
    )


@functools.cache
def _exprs(t: SqlType, depth: int) -> st.SearchStrategy[Scalar]:
    lo, hi = INTEGER_BOUNDS[t.kind]
    i = TYPES.index(t)
    leaf = st.one_of(
        st.just(Col(t, i)),
        st.sampled_from([Col(u, j) for j, u in enumerate(TYPES) if u != t]).map(lambda c: call("cast", t, c)),
        st.one_of(st.integers(-3, 3), st.sampled_from([lo, hi, 2])).map(lambda v: Lit(t, v)),
        st.just(Lit(t, None)),
    )
    if depth == 0:
        return leaf
    inner = _exprs(t, depth - 1)
    others = st.sampled_from([u for u in TYPES if u != t]).flatmap(lambda u: _exprs(u, depth - 1))
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(["add", "sub", "mul", "int_div", "mod"]), inner, inner).map(
            lambda x: call(x[0], t, x[1], x[2])
        ),
        st.tuples(st.sampled_from(["neg", "abs"]), inner).map(lambda x: call(x[0], t, x[1])),
        others.map(lambda e: call("cast", t, e)),
        st.tuples(inner, inner, inner).map(lambda x: call("case", t, call("lt", BOOLEAN, x[0], x[1]), x[1], x[2])),
        st.tuples(st.sampled_from(["coalesce", "greatest", "least"]), inner, inner).map(
            lambda x: call(x[0], t, x[1], x[2])
        ),
    )


def _outcome(f: pl.DataFrame, exprs: list[Scalar]) -> tuple[str, Any]:
    try:
        return "rows", evaluate(f, exprs, "v").rows()
    except RuntimeSqlError as e:
        return "error", str(e)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_proof_changes_no_value_and_no_error(data: st.DataObject) -> None:
    rows = data.draw(st.integers(1, 6))
    columns = [data.draw(st.lists(_edges(t), min_size=rows, max_size=rows)) for t in TYPES]
    f = frame(*columns)
    t = data.draw(st.sampled_from(TYPES))
    exprs = data.draw(st.lists(_exprs(t, 3), min_size=1, max_size=3))
    with_proof = _outcome(f, exprs)
    with mock.patch.object(expressions.value_bounds, "proven", lambda *_: NONE_PROVEN):
        without = _outcome(f, exprs)
    assert with_proof == without
    assert value_bounds.proven is proven  # (the patch is gone)


def test_a_row_computes_the_same_whether_or_not_its_batch_proves_the_division() -> None:
    """sqllogictest's `col2 * 98 / -98` (random/aggregates/slt_good_6.test): a row's
    value must not depend on the other rows of its batch, or a delete of it in a later
    step cancels nothing. Through doubles 59 * 98 / -98 was -58."""
    expr = call("int_div_or_null", BIGINT, call("mul", BIGINT, Col(BIGINT, 0), Lit(BIGINT, 98)), Lit(BIGINT, -98))
    values = list(range(-200, 201))
    f = ZSet.from_rows([(v,) for v in values], [BIGINT]).frame
    assert expr in proven(f, [expr])
    assert sorted(evaluate(f, [expr], "v")["c0"].to_list()) == sorted(-v for v in values)

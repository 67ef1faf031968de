"""Property tests of the DBSP stream algebra on random Z-set streams (DBSP §2-§4, §7).

A tiny reference stream library lives here: a stream is a finite prefix s[0..n-1] of
values of an abelian group, and lift, z⁻¹, I, D and δ0 are written once, generically, so
the same definitions serve the scalar worked example (seeds-digest §2(a), over ℤ) and
Z-set streams built with the runtime's own ZSet algebra (concat / negate / consolidate).
Against that reference the tests check the identities the compiler's rewrite rules rest
on, using the runtime kernels that implement each incremental operator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.logical.scalar import Call, Col, Lit
from dbspc.compiler.types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, SqlType
from dbspc.runtime.kernels.aggregate import IncrementalAggregate, aggregate
from dbspc.runtime.kernels.distinct import distinct, distinct_delta
from dbspc.runtime.kernels.join import join, join_with_trace
from dbspc.runtime.kernels.linear import filter_rows, map_rows
from dbspc.runtime.oracle import assert_same_rows, duckdb_views
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet

V = TypeVar("V")
W = TypeVar("W")
Stream = list  # a finite prefix s[0], s[1], ... of a stream (Def 2.1)


# ---------------------------------------------------------------------------------------
# Reference stream library (DBSP §2), generic over an abelian group
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Group(Generic[V]):
    """An abelian group (A, +, 0, −): the values a stream carries."""

    zero: Callable[[], V]
    add: Callable[[V, V], V]
    neg: Callable[[V], V]

    def sub(self, a: V, b: V) -> V:
        return self.add(a, self.neg(b))


def lift(f: Callable[[V], W], s: Sequence[V]) -> list[W]:
    """(↑f)(s)[t] = f(s[t]) (Def 2.3)."""
    return [f(x) for x in s]


def lift2(f: Callable[[V, V], W], a: Sequence[V], b: Sequence[V]) -> list[W]:
    """Pointwise lifting of a binary operator."""
    assert len(a) == len(b)
    return [f(x, y) for x, y in zip(a, b, strict=True)]


def delay(g: Group[V], s: Sequence[V]) -> list[V]:
    """z⁻¹(s)[0] = 0, z⁻¹(s)[t] = s[t−1] (Def 2.5)."""
    return [g.zero(), *s[:-1]] if s else []


def integrate(g: Group[V], s: Sequence[V]) -> list[V]:
    """I(s)[t] = Σ_{i≤t} s[i]."""
    out: list[V] = []
    acc = g.zero()
    for x in s:
        acc = g.add(acc, x)
        out.append(acc)
    return out


def differentiate(g: Group[V], s: Sequence[V]) -> list[V]:
    """D(s) = s − z⁻¹(s)."""
    return lift2(g.sub, s, delay(g, s))


def delta0(g: Group[V], v: V, n: int) -> list[V]:
    """δ0(v) = [v, 0, 0, ...] (§5), truncated to n steps."""
    return [v] + [g.zero() for _ in range(n - 1)]


StreamOp = Callable[[Sequence[V]], list[W]]


def compose(q1: Callable[[Sequence[W]], list[Any]], q2: Callable[[Sequence[V]], list[W]]) -> StreamOp:
    """Q1 ∘ Q2."""
    return lambda s: q1(q2(s))


def incrementalize(g_in: Group[V], g_out: Group[W], q: Callable[[Sequence[V]], list[W]]) -> StreamOp:
    """Q^Δ = D ∘ Q ∘ I (Def 3.1), for a stream operator q."""
    return lambda s: differentiate(g_out, q(integrate(g_in, s)))


INTS: Group[int] = Group(lambda: 0, lambda a, b: a + b, lambda a: -a)


def zset_group(types: Sequence[SqlType]) -> Group[ZSet]:
    """Z-sets over `types` with the runtime's own + (concat, consolidate) and −."""
    ts = tuple(types)
    return Group(
        lambda: ZSet.empty(ts),
        lambda a, b: ZSet.concat([a, b], ts).consolidate(),
        lambda a: a.negate(),
    )


Rows = list[tuple[tuple[Any, ...], int]]


def rows_of(s: Sequence[ZSet]) -> list[Rows]:
    """A Z-set stream as comparable values: each Z-set's consolidated (row, weight) list."""
    return [z.to_rows() for z in s]


# ---------------------------------------------------------------------------------------
# Random Z-set streams over (INT, STRING), with NULLs and negative weights
# ---------------------------------------------------------------------------------------

TYPES: tuple[SqlType, ...] = (INT, STRING)
ZS = zset_group(TYPES)
JOIN_TYPES: tuple[SqlType, ...] = (*TYPES, *TYPES)
ZJ = zset_group(JOIN_TYPES)

value_int = st.one_of(st.none(), st.integers(0, 3))
value_str = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))
row_st = st.tuples(value_int, value_str)
zset_st = st.lists(st.tuples(row_st, st.integers(-2, 2).filter(bool)), max_size=6).map(
    lambda rws: ZSet.from_rows([r for r, _ in rws], TYPES, [w for _, w in rws])
)
stream_st = st.lists(zset_st, min_size=1, max_size=5)
# Snapshots of a table: positive Z-sets (bags). D of such a stream is a change stream
# whose integral is always a positive Z-set, as SQL operators require.
bag_st = st.lists(st.tuples(row_st, st.integers(1, 2)), max_size=6).map(
    lambda rws: ZSet.from_rows([r for r, _ in rws], TYPES, [w for _, w in rws])
)
bag_stream_st = st.lists(bag_st, min_size=1, max_size=5)

SETTINGS = settings(max_examples=60, deadline=None)

# Linear operators built from the runtime's scalar IR: σ_{c0 > 1} and map (c0 * 2, c1).
PRED = Call(BOOLEAN, "gt", (Col(INT, 0), Lit(INT, 1)))
MAP_EXPRS = (Call(INT, "mul", (Col(INT, 0), Lit(INT, 2))), Col(STRING, 1))
PROJ_EXPRS = (Col(STRING, 1),)


def sigma(z: ZSet) -> ZSet:
    return filter_rows(z, PRED, "test")


def mapf(z: ZSet) -> ZSet:
    return map_rows(z, MAP_EXPRS, TYPES, "test").consolidate()


def proj(z: ZSet) -> ZSet:
    return map_rows(z, PROJ_EXPRS, (STRING,), "test").consolidate()


# ---------------------------------------------------------------------------------------
# §1.1-§1.2: I, D, linearity, chain rule
# ---------------------------------------------------------------------------------------


@SETTINGS
@given(s=stream_st)
def test_integration_and_differentiation_are_inverse(s: list[ZSet]) -> None:
    """Thm 2.22: I ∘ D = D ∘ I = id on Z-set streams."""
    assert rows_of(integrate(ZS, differentiate(ZS, s))) == rows_of(s)
    assert rows_of(differentiate(ZS, integrate(ZS, s))) == rows_of(s)


@SETTINGS
@given(s=stream_st)
def test_delay_shifts_and_integral_is_feedback_loop(s: list[ZSet]) -> None:
    """Def 2.5 and I(s) = s + z⁻¹(I(s)): the integrator is the loop α = s + z⁻¹α."""
    d = delay(ZS, s)
    assert d[0].to_rows() == []
    assert rows_of(d[1:]) == rows_of(s[:-1])
    i = integrate(ZS, s)
    assert rows_of(i) == rows_of(lift2(ZS.add, s, delay(ZS, i)))


@SETTINGS
@given(a=zset_st, b=zset_st)
def test_filter_and_map_are_linear(a: ZSet, b: ZSet) -> None:
    """Def 2.14: σ and map satisfy Q(a + b) = Q(a) + Q(b) and Q(−a) = −Q(a)."""
    for q in (sigma, mapf, proj):
        assert q(ZS.add(a, b)).to_rows() == ZSet.concat([q(a), q(b)], q(a).types).consolidate().to_rows()
        assert q(a.negate()).to_rows() == q(a).negate().to_rows()


@SETTINGS
@given(s=stream_st)
def test_linear_operators_are_their_own_incremental_version(s: list[ZSet]) -> None:
    """Thm 3.3: for LTI Q (here ↑σ, ↑map), Q^Δ = D ∘ Q ∘ I = Q."""
    for q, g_out in ((sigma, ZS), (mapf, ZS), (proj, zset_group((STRING,)))):
        q_delta = incrementalize(ZS, g_out, partial(lift, q))
        assert rows_of(q_delta(s)) == rows_of(lift(q, s))


@SETTINGS
@given(s=stream_st)
def test_chain_rule(s: list[ZSet]) -> None:
    """Prop 3.2 (chain): (Q1 ∘ Q2)^Δ = Q1^Δ ∘ Q2^Δ, for linear and non-linear Q1."""
    s1 = zset_group((STRING,))
    for f1, f2, g_mid, g_out in (
        (mapf, sigma, ZS, ZS),  # linear ∘ linear
        (distinct, sigma, ZS, ZS),  # non-linear ∘ linear
        (distinct, proj, s1, s1),  # distinct ∘ π
        (proj, distinct, ZS, s1),  # linear ∘ non-linear
    ):
        q1, q2 = partial(lift, f1), partial(lift, f2)
        whole = incrementalize(ZS, g_out, compose(q1, q2))(s)
        chained = incrementalize(g_mid, g_out, q1)(incrementalize(ZS, g_mid, q2)(s))
        assert rows_of(whole) == rows_of(chained)


# ---------------------------------------------------------------------------------------
# §1.2 Thm 3.4: the bilinear join
# ---------------------------------------------------------------------------------------


def join_on_c0(a: ZSet, b: ZSet) -> ZSet:
    return join(a, b, [0], [0], JOIN_TYPES)


@SETTINGS
@given(a=stream_st, b=stream_st)
def test_bilinear_join_rule(a: list[ZSet], b: list[ZSet]) -> None:
    """Thm 3.4: D(I(a) ⋈ I(b)) = a⋈b + z⁻¹(I a)⋈b + a⋈z⁻¹(I b).

    The right-hand side is computed the way the runtime does: the two integrals are
    Traces keyed by the join column, probed with join_with_trace *before* the step's
    change is inserted (so they hold z⁻¹(I ·)). The cheaper two-term form
    I(a)⋈b + a⋈z⁻¹(I b) is checked too.
    """
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    lhs = differentiate(ZJ, lift2(join_on_c0, integrate(ZS, a), integrate(ZS, b)))

    trace_a, trace_b = Trace(TYPES, (0,)), Trace(TYPES, (0,))
    three_terms: list[ZSet] = []
    two_terms: list[ZSet] = []
    for da, db in zip(a, b, strict=True):
        t1 = join_on_c0(da, db)
        t2 = join_with_trace(db, [0], trace_a, False, JOIN_TYPES)  # z⁻¹(I a) ⋈ b
        t3 = join_with_trace(da, [0], trace_b, True, JOIN_TYPES)  # a ⋈ z⁻¹(I b)
        three_terms.append(ZSet.concat([t1, t2, t3], JOIN_TYPES).consolidate())
        trace_a.insert(da)
        t_ia = join_with_trace(db, [0], trace_a, False, JOIN_TYPES)  # I(a) ⋈ b
        two_terms.append(ZSet.concat([t_ia, t3], JOIN_TYPES).consolidate())
        trace_b.insert(db)
    assert rows_of(three_terms) == rows_of(lhs)
    assert rows_of(two_terms) == rows_of(lhs)


@SETTINGS
@given(a=zset_st, b=zset_st, c=zset_st)
def test_join_is_bilinear(a: ZSet, b: ZSet, c: ZSet) -> None:
    """Def 2.15: (a + b) ⋈ c = a⋈c + b⋈c and a ⋈ (b + c) = a⋈b + a⋈c."""
    assert join_on_c0(ZS.add(a, b), c).to_rows() == ZJ.add(join_on_c0(a, c), join_on_c0(b, c)).to_rows()
    assert join_on_c0(a, ZS.add(b, c)).to_rows() == ZJ.add(join_on_c0(a, b), join_on_c0(a, c)).to_rows()


# ---------------------------------------------------------------------------------------
# §1.3 Prop 4.7: incremental distinct
# ---------------------------------------------------------------------------------------


def reference_h(i: ZSet, d: ZSet) -> ZSet:
    """H(i, d) written directly from Prop 4.7 over Python dicts (all rows of d)."""
    iw = dict(i.to_rows())
    nw = dict(ZS.add(i, d).to_rows())
    rows, weights = [], []
    for x, _ in d.to_rows():
        before, after = iw.get(x, 0), nw.get(x, 0)
        h = -1 if before > 0 and after <= 0 else 1 if before <= 0 and after > 0 else 0
        if h:
            rows.append(x)
            weights.append(h)
    return ZSet.from_rows(rows, TYPES, weights)


@SETTINGS
@given(d=stream_st)
def test_incremental_distinct(d: list[ZSet]) -> None:
    """Prop 4.7: (↑distinct)^Δ(d) = D(distinct(I d)) = ↑H(z⁻¹(I d), d).

    H runs as runtime.kernels.distinct.distinct_delta over a Trace holding z⁻¹(I d);
    it also agrees with H written out from its definition.
    """
    lhs = differentiate(ZS, lift(distinct, integrate(ZS, d)))
    state = Trace(TYPES, (0, 1))
    h_stream: list[ZSet] = []
    ref_stream = lift2(reference_h, delay(ZS, integrate(ZS, d)), d)
    for dt in d:
        h_stream.append(distinct_delta(state, dt))
        state.insert(dt)
    assert rows_of(h_stream) == rows_of(lhs)
    assert rows_of(ref_stream) == rows_of(lhs)


# ---------------------------------------------------------------------------------------
# §7.2-7.4: the incremental GROUP BY aggregate
# ---------------------------------------------------------------------------------------

AGGS = (
    AggCall("count_star", None, BIGINT),
    AggCall("count", 0, BIGINT),
    AggCall("sum", 0, BIGINT),
    AggCall("avg", 0, DOUBLE),
    AggCall("min", 0, INT),
    AggCall("max", 0, INT),
    AggCall("count", 0, BIGINT, distinct=True),
)
GROUPED_OUT: tuple[SqlType, ...] = (STRING, *(a.type for a in AGGS))
GLOBAL_OUT: tuple[SqlType, ...] = tuple(a.type for a in AGGS)


@SETTINGS
@given(snapshots=bag_stream_st)
def test_incremental_aggregate(snapshots: list[ZSet]) -> None:
    """§7.4: (↑Agg ∘ G_p)^Δ = D ∘ ↑Agg ∘ G_p ∘ I, computed by IncrementalAggregate.

    The change stream d = D(snapshots) has a positive integral (tables are bags). Both a
    GROUP BY c1 and a global aggregate (one row even for empty input: not zpp, so its
    D has a non-zero value at t = 0) are checked step by step.
    """
    d = differentiate(ZS, snapshots)
    assert rows_of(integrate(ZS, d)) == rows_of(snapshots)
    for group, out, is_global in (((1,), GROUPED_OUT, False), ((), GLOBAL_OUT, True)):
        g_out = zset_group(out)
        full = [aggregate(z, group, AGGS, out, is_global) for z in snapshots]
        expected = differentiate(g_out, full)
        inc = IncrementalAggregate(TYPES, group, AGGS, out, is_global)
        got: list[ZSet] = []
        for dt in d:
            delta, commit = inc.step(dt)
            commit()
            got.append(delta)
        assert rows_of(got) == rows_of(expected), f"group={group}"


# ---------------------------------------------------------------------------------------
# Worked examples (seeds-digest §2)
# ---------------------------------------------------------------------------------------


def test_worked_example_a_scalar_streams() -> None:
    """§2(a): with id = [0,1,2,3,4]: ↑(2x), z⁻¹, D, I and δ0(5) over ℤ."""
    ident = [0, 1, 2, 3, 4]
    assert lift(lambda x: 2 * x, ident) == [0, 2, 4, 6, 8]
    assert delay(INTS, ident) == [0, 0, 1, 2, 3]
    assert differentiate(INTS, ident) == [0, 1, 1, 1, 1]
    assert integrate(INTS, ident) == [0, 1, 3, 6, 10]
    assert delta0(INTS, 5, 5) == [5, 0, 0, 0, 0]
    # Thm 2.22 and Def 2.6 on the same stream
    assert integrate(INTS, differentiate(INTS, ident)) == ident
    assert differentiate(INTS, integrate(INTS, ident)) == ident
    assert lift(lambda x: 2 * x, delay(INTS, ident)) == delay(INTS, lift(lambda x: 2 * x, ident))


def test_worked_example_b_zsets() -> None:
    """§2(b): R = {joe↦1, anne↦−1}: not a set, not positive, distinct(R) = {joe↦1}; G_p
    by first letter, and the weighted count per group = {(j,1)↦1, (a,−1)↦1}."""
    r = ZSet.from_rows([("joe",), ("anne",)], [STRING], [1, -1])
    weights = r.frame[WEIGHT].to_list()
    assert not all(w == 1 for w in weights)  # isset(R) = false
    assert not r.is_positive()  # ispositive(R) = false
    assert distinct(r).to_rows() == [(("joe",), 1)]

    keyed = r.frame.with_columns(pl.col("c0").str.slice(0, 1).alias("k"))
    groups = {
        k: ZSet.from_frame(part.drop("k"), [STRING]).to_rows()
        for (k,), part in keyed.group_by("k", maintain_order=True)
    }
    assert groups == {"j": [(("joe",), 1)], "a": [(("anne",), -1)]}

    counts = keyed.group_by("k").agg(pl.col(WEIGHT).sum().alias("c1")).rename({"k": "c0"})
    counted = ZSet.from_frame(counts.with_columns(pl.lit(1).alias(WEIGHT)), [STRING, BIGINT])
    assert Counter(dict(counted.to_rows())) == Counter({("j", 1): 1, ("a", -1): 1})


EXAMPLE_44 = """
CREATE TABLE t (id INT, x INT, a INT);
CREATE TABLE r (id INT, y INT, s INT);
CREATE VIEW v AS
SELECT DISTINCT t1.x, t2.y FROM (
  SELECT t.x, t.id FROM t WHERE t.a > 2) t1
JOIN (
  SELECT r.id, r.y FROM r WHERE r.s > 5) t2 ON t1.id = t2.id;
"""


def _kinds(c: Circuit) -> Counter[str]:
    live = c.live()
    return Counter(c[n].kind for n in live)


def _delayed_integral_of(c: Circuit, n: int) -> int | None:
    """x when node n is z⁻¹(I x), else None."""
    o = c[n]
    if isinstance(o, op.Delay) and isinstance(c[o.inputs[0]], op.Integrate):
        return c[o.inputs[0]].inputs[0]
    return None


def test_worked_example_c_circuit_shape() -> None:
    """§2(c), Figure 1: three integrals, three joins A⋈B, z⁻¹(I A)⋈B, A⋈z⁻¹(I B), summed,
    projected to (x, y), then ΔV = ↑H(z⁻¹(I P), P)."""
    c = compile_sql(EXAMPLE_44).circuit
    assert c.incremental
    kinds = _kinds(c)
    assert kinds["integrate"] == 3
    assert kinds["join"] == 3
    assert kinds["distinct_h"] == 1
    assert kinds["delay"] == 3
    assert kinds["distinct"] == 0 and kinds["differentiate"] == 0

    joins = [n for n in c.live() if isinstance(c[n], op.Join)]
    plain = [j for j in joins if all(_delayed_integral_of(c, i) is None for i in c[j].inputs)]
    assert len(plain) == 1
    a, b = c[plain[0]].inputs
    assert a != b
    shapes = set()
    for j in joins:
        left, right = c[j].inputs
        shapes.add(
            (
                ("zI", _delayed_integral_of(c, left)) if _delayed_integral_of(c, left) is not None else left,
                ("zI", _delayed_integral_of(c, right)) if _delayed_integral_of(c, right) is not None else right,
            )
        )
    assert shapes == {(a, b), (("zI", a), b), (a, ("zI", b))}
    # A = π(σ(Δt)), B = π(σ(Δr)): linear operators straight over the change sources.
    for side, table in ((a, "t"), (b, "r")):
        assert isinstance(c[side], op.Map)
        assert isinstance(c[c[side].inputs[0]], op.Filter)
        src = c[c[c[side].inputs[0]].inputs[0]]
        assert isinstance(src, op.Source) and src.name == table
    # The integrals of A and B are indexed by the join key (#1 of A = #0 of B).
    integrals = [c[n] for n in c.live() if isinstance(c[n], op.Integrate)]
    keyed = {(i.inputs[0], i.key) for i in integrals if isinstance(i, op.Integrate)}
    first = c[plain[0]]
    assert isinstance(first, op.Join)
    assert {(a, first.left_keys), (b, first.right_keys)} <= keyed

    (h,) = [n for n in c.live() if isinstance(c[n], op.DistinctIncremental)]
    state, p = c[h].inputs
    assert _delayed_integral_of(c, state) == p
    assert isinstance(c[p], op.Map)
    plus = c[c[p].inputs[0]]
    assert isinstance(plus, op.Plus) and sorted(plus.inputs) == sorted(joins)
    (out,) = c.outputs().values()
    assert c[out].inputs == (h,)


def _values(lo: int, hi: int) -> st.SearchStrategy[int | None]:
    return st.one_of(st.none(), st.integers(lo, hi))


# Column ranges of the §4.4 tables t(id, x, a) and r(id, y, s), so that both the filters
# (a > 2, s > 5) and the join on id keep and drop rows.
EXAMPLE_44_COLUMNS = {
    "t": (_values(0, 2), _values(0, 3), _values(0, 5)),
    "r": (_values(0, 2), _values(0, 3), _values(3, 8)),
}


@st.composite
def change_streams(
    draw: st.DrawFn, tables: Mapping[str, Sequence[st.SearchStrategy[int | None]]], steps: int = 5
) -> list[dict[str, list[tuple[tuple, int]]]]:
    """Steps of {table: [(row, weight)]}: inserts of random rows (duplicates included)
    and deletes of rows present at that moment (each copy at most once)."""
    present: dict[str, Counter[tuple]] = {t: Counter() for t in tables}
    out = []
    for _ in range(draw(st.integers(1, steps))):
        step: dict[str, list[tuple[tuple, int]]] = {}
        for t, columns in tables.items():
            changes: list[tuple[tuple, int]] = []
            have = sorted(present[t].elements(), key=repr)
            if have:
                kill = draw(st.lists(st.integers(0, len(have) - 1), unique=True, max_size=len(have)))
                changes += [(have[k], -1) for k in kill]
            for row in draw(st.lists(st.tuples(*columns), max_size=4)):
                changes.append((row, 1))
            for row, w in changes:
                present[t][row] += w
            step[t] = changes
        out.append(step)
    return out


def _as_zsets(p: Pipeline, step: dict[str, list[tuple[tuple, int]]]) -> dict[str, ZSet]:
    return {t: ZSet.from_rows([r for r, _ in ch], p.table_types(t), [w for _, w in ch]) for t, ch in step.items()}


@settings(max_examples=25, deadline=None)
@given(stream=change_streams(EXAMPLE_44_COLUMNS))
def test_worked_example_c_incremental_equals_recomputation(stream: list[dict[str, list[tuple[tuple, int]]]]) -> None:
    """§2(c) end to end (Algorithm 4.8): I of the incremental pipeline's output deltas
    equals the non-incremental pipeline's and DuckDB's view over the integrated tables."""
    inc = Pipeline.from_sql(EXAMPLE_44)
    full = Pipeline.from_sql(EXAMPLE_44, incremental=False)
    assert inc.incremental and not full.incremental
    types = inc.view_types("v")
    acc_inc, acc_full = ZSet.empty(types), ZSet.empty(types)
    for number, step in enumerate(stream, start=1):
        acc_inc = ZSet.concat([acc_inc, inc.step(_as_zsets(inc, step))["v"]], types).consolidate()
        acc_full = ZSet.concat([acc_full, full.step(_as_zsets(full, step))["v"]], types).consolidate()
        assert acc_inc.to_rows() == acc_full.to_rows(), f"step {number}"
        tables = {name: inc.table_contents(name) for name in ("t", "r")}
        expected = duckdb_views(inc, tables)["v"]
        assert_same_rows(acc_inc.to_rows(), expected, f"§4.4 example, step {number}")

"""Unit tests of the incrementalization rewrite passes (DBSP Algorithm 4.8).

Each rule is applied to a hand-built circuit and the shape it produces is checked
against the law it implements; whole-program tests go through compile_sql.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

import pytest

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import to_dot, to_json, to_text
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.errors import InternalCompilerError, SqlError
from dbspc.compiler.frontend.program import compile_program
from dbspc.compiler.incremental.aggregate_incremental import aggregate_incremental
from dbspc.compiler.incremental.cancel_d_i import cancel_differentiate_integrate
from dbspc.compiler.incremental.check_incremental import check_incremental
from dbspc.compiler.incremental.consolidate_distinct import consolidate_distinct, redundant_distincts
from dbspc.compiler.incremental.distinct_incremental import distinct_incremental
from dbspc.compiler.incremental.join_bilinear import join_bilinear
from dbspc.compiler.incremental.passes import explain, optimize
from dbspc.compiler.incremental.positivity import positive_nodes
from dbspc.compiler.incremental.push_integral_linear import push_integral_through_linear
from dbspc.compiler.logical.aggregate import AggCall
from dbspc.compiler.logical.scalar import Call, Col, Lit
from dbspc.compiler.lower.lower import lower_views
from dbspc.compiler.types import BIGINT, BOOLEAN, DOUBLE, INT, STRING, SqlType
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import ZSet
from tests.stepcheck import add

T2: tuple[SqlType, ...] = (INT, STRING)
T4: tuple[SqlType, ...] = (*T2, *T2)
PRED = Call(BOOLEAN, "gt", (Col(INT, 0), Lit(INT, 2)))


def kinds(c: Circuit) -> Counter[str]:
    """Operator kinds of the live part of a circuit."""
    return Counter(c[n].kind for n in c.live())


def source_and_integral(c: Circuit, name: str = "t", key: tuple[int, ...] = (0, 1)) -> tuple[int, int]:
    s = c.add(op.Source((), T2, name))
    return s, c.add(op.Integrate((s,), T2, key))


def lifted(sql: str) -> Circuit:
    """The lifted (non-incremental) circuit of a program, before any pass."""
    return lower_views(list(compile_program(sql).views.values()))


# ---------------------------------------------------------------------------------------
# Individual rules
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda i: op.Filter((i,), T2, PRED),
        lambda i: op.Map((i,), (INT,), (Col(INT, 0),)),
        lambda i: op.Negate((i,), T2),
        lambda i: op.Plus((i, i), T2),
    ],
    ids=["filter", "map", "negate", "plus"],
)
def test_push_integral_through_linear(make: Callable[[int], op.Operator]) -> None:
    """Prop 3.2 push/pull + Thm 3.3: Q(I(x)) ↦ I(Q(x)) for linear Q."""
    c = Circuit()
    s, i = source_and_integral(c)
    o = make(i)
    n = push_integral_through_linear(c, o)
    assert n is not None
    integral = c[n]
    assert isinstance(integral, op.Integrate)
    assert integral.types == o.types and integral.key == tuple(range(len(o.types)))
    inner = c[integral.inputs[0]]
    assert type(inner) is type(o)
    assert inner.inputs == tuple(s for _ in o.inputs)


def test_push_integral_needs_every_input_integrated() -> None:
    """The rule fires only when all inputs are I(x) (add rule), and only for linear Q."""
    c = Circuit()
    s, i = source_and_integral(c)
    assert push_integral_through_linear(c, op.Plus((i, s), T2)) is None
    assert push_integral_through_linear(c, op.Filter((s,), T2, PRED)) is None
    assert push_integral_through_linear(c, op.Distinct((i,), T2)) is None
    assert push_integral_through_linear(c, op.Join((i, i), T4, (0,), (0,))) is None


def delayed_integral_input(c: Circuit, n: int) -> tuple[int, tuple[int, ...]] | None:
    """(x, key) when node n is z⁻¹(I x) with I keyed by key."""
    o = c[n]
    if isinstance(o, op.Delay) and isinstance(c[o.inputs[0]], op.Integrate):
        integral = c[o.inputs[0]]
        assert isinstance(integral, op.Integrate)
        return integral.inputs[0], integral.key
    return None


def test_join_bilinear() -> None:
    """Thm 3.4: join(I a, I b) ↦ I(a⋈b + z⁻¹(I a)⋈b + a⋈z⁻¹(I b)), with each integral
    indexed by its side's join keys."""
    c = Circuit()
    a, ia = source_and_integral(c, "a")
    b, ib = source_and_integral(c, "b")
    o = op.Join((ia, ib), T4, (1,), (0,))
    n = join_bilinear(c, o)
    assert n is not None
    integral = c[n]
    assert isinstance(integral, op.Integrate) and integral.key == (0, 1, 2, 3)
    plus = c[integral.inputs[0]]
    assert isinstance(plus, op.Plus) and len(plus.inputs) == 3
    shapes = []
    for term in plus.inputs:
        j = c[term]
        assert isinstance(j, op.Join) and (j.left_keys, j.right_keys) == ((1,), (0,)) and j.types == T4
        left, right = j.inputs
        shapes.append((delayed_integral_input(c, left) or left, delayed_integral_input(c, right) or right))
    assert shapes == [(a, b), ((a, (1,)), b), (a, (b, (0,)))]
    assert join_bilinear(c, op.Join((a, ib), T4, (1,), (0,))) is None
    assert join_bilinear(c, op.Filter((ia,), T2, PRED)) is None


def test_join_bilinear_cross_product_keys_nothing() -> None:
    """A cross join (no keys) keeps un-indexed integrals: every probe matches all rows."""
    c = Circuit()
    _, ia = source_and_integral(c, "a")
    _, ib = source_and_integral(c, "b")
    n = join_bilinear(c, op.Join((ia, ib), T4, (), ()))
    assert n is not None
    keys = {o.key for i, o in enumerate(c.nodes) if isinstance(o, op.Integrate) and i != n}
    assert () in keys


def test_distinct_incremental() -> None:
    """Prop 4.7: distinct(I d) ↦ I(H(z⁻¹(I d), d)), the state keyed by every column."""
    c = Circuit()
    s, i = source_and_integral(c)
    n = distinct_incremental(c, op.Distinct((i,), T2))
    assert n is not None
    integral = c[n]
    assert isinstance(integral, op.Integrate)
    h = c[integral.inputs[0]]
    assert isinstance(h, op.DistinctIncremental)
    state, change = h.inputs
    assert change == s
    assert delayed_integral_input(c, state) == (s, (0, 1))
    assert distinct_incremental(c, op.Distinct((s,), T2)) is None


def test_aggregate_incremental() -> None:
    """§7.4: aggregate(I d) ↦ I(aggregate_incremental(d))."""
    c = Circuit()
    s, i = source_and_integral(c)
    aggs = (AggCall("count_star", None, BIGINT), AggCall("min", 0, INT))
    o = op.Aggregate((i,), (STRING, BIGINT, INT), (1,), aggs, False)
    n = aggregate_incremental(c, o)
    assert n is not None
    integral = c[n]
    assert isinstance(integral, op.Integrate)
    inc = c[integral.inputs[0]]
    assert isinstance(inc, op.AggregateIncremental)
    assert (inc.inputs, inc.group, inc.aggs, inc.is_global, inc.types) == ((s,), (1,), aggs, False, o.types)
    assert aggregate_incremental(c, op.Aggregate((s,), o.types, (1,), aggs, False)) is None


def test_aggregates_of_distinct_values_aggregate_the_distinct_pairs() -> None:
    """COUNT/SUM/AVG(DISTINCT x), MIN/MAX(x) by g ↦ Agg without DISTINCT over
    distinct(π(g, x)) (lower_aggregate): incrementally distinct's H (Prop 4.7), then
    linear COUNT and SUM (§7.2). Beside other aggregates, the pairs are added to the
    input rows, each aggregate reading its own non-NULL column; COUNT(*) counts a tag
    the pairs leave NULL. Over a float x, COUNT alone: a SUM or a MIN would read which of
    -0.0 and 0.0 the pairs kept."""

    def aggregate_of(sql: str) -> list[op.Operator]:
        circuit = compile_sql(f"CREATE TABLE t (g INT, x INT, y DOUBLE); CREATE VIEW v AS {sql};").circuit
        return [circuit[n] for n in circuit.live() if circuit[n].kind in ("aggregate_incremental", "distinct_h")]

    nodes = aggregate_of("SELECT g, COUNT(DISTINCT x), AVG(DISTINCT x), MAX(x) FROM t GROUP BY g")
    assert [n.kind for n in nodes] == ["distinct_h", "aggregate_incremental"]
    agg = nodes[1]
    assert isinstance(agg, op.AggregateIncremental)
    assert agg.group == (0,) and [str(a) for a in agg.aggs] == ["count(#1)", "avg(#1)", "max(#1)"]
    assert nodes[0].types == (INT, INT)
    nodes = aggregate_of("SELECT g, COUNT(DISTINCT x), COUNT(*), SUM(DISTINCT y), MAX(y) FROM t GROUP BY g")
    assert [n.kind for n in nodes] == ["distinct_h", "aggregate_incremental"]
    agg = nodes[1]
    assert isinstance(agg, op.AggregateIncremental)
    assert agg.types == (INT, BIGINT, BIGINT, DOUBLE, DOUBLE)
    # over the union's g, y (MAX's and the float DISTINCT's), the tag, the distinct x
    assert [str(a) for a in agg.aggs] == ["count(#3)", "count(#2)", "sum(distinct #1)", "max(#1)"]
    for kept in ("SUM(DISTINCT y)", "MAX(x)", "COUNT(*), SUM(x)"):
        assert [n.kind for n in aggregate_of(f"SELECT g, {kept} FROM t GROUP BY g")] == ["aggregate_incremental"]
    assert [n.kind for n in aggregate_of("SELECT COUNT(DISTINCT y) FROM t")] == ["distinct_h", "aggregate_incremental"]


def test_count_distinct_of_floats_over_pairs_counts_zeros_and_nans_once() -> None:
    """COUNT(DISTINCT y) of a DOUBLE, lowered to the distinct pairs: -0.0 = 0.0 and
    NaN = NaN, as Spark's DISTINCT has them, through inserts and deletes."""
    p = Pipeline.from_sql("CREATE TABLE t (g INT, y DOUBLE); CREATE VIEW v AS SELECT COUNT(DISTINCT y) AS n FROM t;")
    counts, view = [], ZSet.empty(p.view_types("v"))
    steps: list[tuple[list[tuple[int, float | None]], list[int]]] = [
        ([(1, -0.0), (1, 0.0), (2, float("nan")), (3, float("nan")), (1, 1.0), (1, None)], [1, 1, 1, 1, 1, 1]),
        ([(1, 0.0), (2, float("nan"))], [-1, -1]),
        ([(1, -0.0)], [-1]),
    ]
    for rows, weights in steps:
        view = add(view, p.step({"t": ZSet.from_rows(rows, p.table_types("t"), weights)})["v"])
        counts.append(view.to_rows())
    assert counts == [[((3,), 1)], [((3,), 1)], [((2,), 1)]]


def test_cancel_differentiate_integrate() -> None:
    """Thm 2.22: D(I(x)) ↦ x; a D of anything else is left alone."""
    c = Circuit()
    s, i = source_and_integral(c)
    assert cancel_differentiate_integrate(c, op.Differentiate((i,), T2)) == s
    assert cancel_differentiate_integrate(c, op.Differentiate((s,), T2)) is None
    assert cancel_differentiate_integrate(c, op.Filter((i,), T2, PRED)) is None


# ---------------------------------------------------------------------------------------
# consolidate_distinct and positivity (Props 4.5/4.6)
# ---------------------------------------------------------------------------------------


def test_nested_distinct_is_consolidated() -> None:
    """Prop 4.6: distinct(π(distinct(i))) = distinct(π(i)) for positive i, so SELECT
    DISTINCT over a SELECT DISTINCT subquery keeps one distinct."""
    sql = "CREATE TABLE t (id INT, x INT); CREATE VIEW v AS SELECT DISTINCT x FROM (SELECT DISTINCT x, id FROM t) q;"
    before = lifted(sql)
    assert kinds(before)["distinct"] == 2
    assert len(redundant_distincts(before)) == 1
    assert kinds(consolidate_distinct(before))["distinct"] == 1
    assert kinds(compile_sql(sql, incremental=False).circuit)["distinct"] == 1
    assert kinds(compile_sql(sql).circuit)["distinct_h"] == 1


def test_distinct_through_join_and_filter_is_consolidated() -> None:
    """Prop 4.6 for Q = σ ∘ ⋈ with positive inputs."""
    sql = """CREATE TABLE t (id INT, x INT); CREATE TABLE r (id INT, y INT);
    CREATE VIEW v AS SELECT DISTINCT q.x, r.y FROM (SELECT DISTINCT id, x FROM t) q
    JOIN r ON q.id = r.id WHERE r.y > 1;"""
    assert kinds(compile_sql(sql, incremental=False).circuit)["distinct"] == 1


def test_except_keeps_inner_distincts() -> None:
    """EXCEPT = distinct(distinct(a) − distinct(b)): −distinct(b) is not positive, so
    Prop 4.6 does not apply and neither inner distinct may be dropped (with a = {x↦2},
    b = {x↦1}, dropping them would give {x↦1} instead of {})."""
    sql = """CREATE TABLE t (id INT); CREATE TABLE r (id INT);
    CREATE VIEW v AS SELECT id FROM t EXCEPT SELECT id FROM r;"""
    before = lifted(sql)
    assert kinds(before)["distinct"] == 3
    assert redundant_distincts(before) == set()
    positive = positive_nodes(before)
    for n in before.live():
        o = before[n]
        if isinstance(o, op.Negate):
            assert n not in positive
        if isinstance(o, op.Plus):
            assert n not in positive
        if isinstance(o, (op.Source, op.Distinct)):
            assert n in positive
    assert kinds(compile_sql(sql, incremental=False).circuit)["distinct"] == 3
    assert kinds(compile_sql(sql).circuit)["distinct_h"] == 3


def test_shared_distinct_is_kept() -> None:
    """A distinct that another view also reads is not removed (only sole-consumer chains)."""
    sql = """CREATE TABLE t (id INT, x INT);
    CREATE VIEW v1 AS SELECT DISTINCT x, id FROM t;
    CREATE VIEW v2 AS SELECT DISTINCT x FROM v1;"""
    assert redundant_distincts(lifted(sql)) == set()
    assert kinds(compile_sql(sql, incremental=False).circuit)["distinct"] == 2


def test_positivity_analysis() -> None:
    """Tables, distinct and aggregates are positive; +, ⋈, σ, π keep positivity; − does not."""
    c = Circuit()
    s = c.add(op.Source((), T2, "t"))
    f = c.add(op.Filter((s,), T2, PRED))
    neg = c.add(op.Negate((f,), T2))
    p = c.add(op.Plus((s, neg), T2))
    d = c.add(op.Distinct((p,), T2))
    j = c.add(op.Join((d, f), T4, (0,), (0,)))
    a = c.add(op.Aggregate((p,), (BIGINT,), (), (AggCall("count_star", None, BIGINT),), True))
    c.add(op.Output((j,), T4, "v"))
    c.add(op.Output((a,), (BIGINT,), "w"))
    assert positive_nodes(c) >= {s, f, d, j, a}
    assert neg not in positive_nodes(c) and p not in positive_nodes(c)


# ---------------------------------------------------------------------------------------
# check_incremental and Circuit.validate
# ---------------------------------------------------------------------------------------


def test_check_incremental_rejects_stray_integral() -> None:
    """An I read directly (not through z⁻¹ by a join or H) means a rule failed to fire."""
    c = Circuit(incremental=True)
    _, i = source_and_integral(c)
    f = c.add(op.Filter((i,), T2, PRED))
    c.add(op.Output((f,), T2, "v"))
    with pytest.raises(InternalCompilerError, match="read directly"):
        check_incremental(c)


def test_check_incremental_rejects_leftovers() -> None:
    """No D, distinct or aggregate may survive; z⁻¹ only of an I, read by a join or H."""
    c = Circuit(incremental=True)
    s = c.add(op.Source((), T2, "t"))
    c.add(op.Output((c.add(op.Differentiate((s,), T2)),), T2, "v"))
    with pytest.raises(InternalCompilerError, match="survived"):
        check_incremental(c)

    c = Circuit(incremental=True)
    s = c.add(op.Source((), T2, "t"))
    c.add(op.Output((c.add(op.Delay((s,), T2)),), T2, "v"))
    with pytest.raises(InternalCompilerError, match="non-integral"):
        check_incremental(c)

    c = Circuit(incremental=True)
    _, i = source_and_integral(c)
    z = c.add(op.Delay((i,), T2))
    c.add(op.Output((c.add(op.Map((z,), T2, (Col(INT, 0), Col(STRING, 1)))),), T2, "v"))
    with pytest.raises(InternalCompilerError, match="state"):
        check_incremental(c)


def test_compiled_circuits_pass_check_incremental() -> None:
    c = compile_sql(
        """CREATE TABLE t (id INT, x INT); CREATE TABLE r (id INT, y INT);
        CREATE VIEW v AS SELECT t.x, COUNT(*) AS n FROM t JOIN r ON t.id = r.id GROUP BY t.x;
        CREATE VIEW w AS SELECT x FROM t UNION SELECT y FROM r;"""
    ).circuit
    assert check_incremental(c) is c


def test_validate_rejects_cycle_without_delay() -> None:
    """Cor 2.12: every cycle must pass through a strict operator (z⁻¹)."""
    c = Circuit()
    c.nodes = [
        op.Source((), T2, "t"),
        op.Plus((0, 2), T2),
        op.Filter((1,), T2, PRED),
        op.Output((1,), T2, "v"),
    ]
    with pytest.raises(InternalCompilerError, match="cycle"):
        c.validate()
    # The same loop through z⁻¹ is well defined (α = t + z⁻¹(σ α)).
    c.nodes = [
        op.Source((), T2, "t"),
        op.Plus((0, 3), T2),
        op.Filter((1,), T2, PRED),
        op.Delay((2,), T2),
        op.Output((1,), T2, "v"),
    ]
    c.validate()


def test_validate_rejects_malformed_nodes() -> None:
    c = Circuit()
    s = c.add(op.Source((), T2, "t"))
    c.add(op.Integrate((s,), T2, (5,)))
    with pytest.raises(InternalCompilerError, match="keys a missing column"):
        c.validate()
    with pytest.raises(InternalCompilerError, match="missing node"):
        Circuit().add(op.Filter((3,), T2, PRED))


# ---------------------------------------------------------------------------------------
# Interning, pass order, dumps
# ---------------------------------------------------------------------------------------


def _integrals(c: Circuit) -> list[op.Integrate]:
    return [c[n] for n in c.live() if isinstance(c[n], op.Integrate)]  # type: ignore[misc]


def test_self_join_shares_one_integral() -> None:
    """Interning: in t ⋈ t on the same key, z⁻¹(I t) of both sides is one node."""
    c = compile_sql(
        "CREATE TABLE t (id INT, x INT); CREATE VIEW v AS SELECT a.x, b.x AS y FROM t a JOIN t b ON a.id = b.id;"
    ).circuit
    assert kinds(c)["join"] == 3
    assert len(_integrals(c)) == 1 and kinds(c)["delay"] == 1
    # On different keys the two sides need differently indexed integrals.
    c = compile_sql(
        "CREATE TABLE t (id INT, x INT); CREATE VIEW v AS SELECT a.x, b.x AS y FROM t a JOIN t b ON a.id = b.x;"
    ).circuit
    assert sorted(i.key for i in _integrals(c)) == [(0,), (1,)]


def test_two_joins_on_the_same_key_share_the_integral() -> None:
    """Two views joining t on t.id keep a single z⁻¹(I t) (§4: shared arrangements)."""
    c = compile_sql(
        """CREATE TABLE t (id INT, x INT); CREATE TABLE r (id INT, y INT); CREATE TABLE s (id INT, z INT);
        CREATE VIEW v1 AS SELECT t.x, r.y FROM t JOIN r ON t.id = r.id;
        CREATE VIEW v2 AS SELECT t.x, s.z FROM t JOIN s ON t.id = s.id;"""
    ).circuit
    assert kinds(c)["join"] == 6
    assert len(_integrals(c)) == 3  # t, r, s: one each
    t_source = c.sources()["t"]
    t_integrals = [i for i in _integrals(c) if i.inputs == (t_source,)]
    assert len(t_integrals) == 1


def test_explain_lists_passes_in_order() -> None:
    """Algorithm 4.8's order: consolidate distincts (step 2), then wrap in I…D (step 4),
    then apply the rules (step 5)."""
    sql = "CREATE TABLE t (id INT, x INT); CREATE VIEW v AS SELECT DISTINCT x FROM t WHERE id > 2;"
    steps = explain(lifted(sql))
    names = [name for name, _ in steps]
    assert names[0] == "lower" and names[-1] == "check_incremental"
    # consolidate_distinct reasons about snapshots (positivity), so it runs on the lifted
    # circuit, before incrementalize turns sources into change streams.
    assert names.index("consolidate_distinct") < names.index("incrementalize") < names.index("push_integrals")
    # incrementalize wraps sources in I and outputs in D (Def 3.1) ...
    wrapped = dict(steps)["incrementalize"]
    assert wrapped.incremental and kinds(wrapped)["integrate"] == 1 and kinds(wrapped)["differentiate"] == 1
    # ... and after the push rules every D has cancelled against an I.
    assert to_text(steps[-1][1]) == to_text(optimize(lifted(sql)))
    assert kinds(steps[-1][1])["differentiate"] == 0


DUMP_SQL = """CREATE TABLE t (id INT, x INT, a INT); CREATE TABLE r (id INT, y INT, s STRING);
CREATE VIEW v AS SELECT DISTINCT t.x, r.y FROM t JOIN r ON t.id = r.id WHERE t.a > 2 AND r.s <> 'q"';
CREATE VIEW w AS SELECT r.s, COUNT(*) AS n, MAX(r.y) AS m FROM r GROUP BY r.s;"""


@pytest.mark.parametrize("incremental", [True, False])
def test_dumps_are_deterministic(incremental: bool) -> None:
    """Two compilations print identical text, JSON and dot; JSON parses; dot is a digraph."""
    one = compile_sql(DUMP_SQL, incremental=incremental).circuit
    two = compile_sql(DUMP_SQL, incremental=incremental).circuit
    for render in (to_text, to_json, to_dot):
        assert render(one) == render(two)
    doc = json.loads(to_json(one))
    assert doc["incremental"] is incremental
    ids = [node["id"] for node in doc["nodes"]]
    assert ids == list(range(len(ids)))
    assert all(i < node["id"] for node in doc["nodes"] for i in node["inputs"])  # topological
    assert {node["kind"] for node in doc["nodes"]} >= {"source", "join", "output"}
    dot = to_dot(one)
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    assert (
        to_text(one).splitlines()[0].startswith(f"-- circuit ({'incremental' if incremental else 'non-incremental'})")
    )


def test_compiling_on_a_base_program_equals_compiling_the_whole_text() -> None:
    """compile_sql(text, base=...) reads `text` after base's tables and views, bound
    once: the same circuit as the concatenated program, base left unchanged, and errors
    positioned in `text` itself."""
    ddl = "CREATE TABLE t (a INT, b STRING);\nCREATE TABLE u (a INT);\nCREATE VIEW v AS SELECT a FROM t WHERE a > 2"
    view = "CREATE VIEW q AS SELECT v.a, COUNT(*) AS n FROM v JOIN u ON v.a = u.a GROUP BY v.a"
    base = compile_program(ddl)
    whole = compile_sql(f"{ddl};\n{view}")
    on_base = compile_sql(view, base=base)
    assert to_text(on_base.circuit) == to_text(whole.circuit)
    assert list(on_base.program.views) == ["v", "q"] and list(base.views) == ["v"]
    assert "q" not in base.catalog.tables
    with pytest.raises(SqlError) as e:
        compile_sql("CREATE VIEW w AS SELECT nope FROM t", base=base)
    assert e.value.span is not None and e.value.span.line == 1

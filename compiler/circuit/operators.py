"""The operators of a DBSP circuit: the paper's primitives, as frozen dataclasses.

`Lifted` operators (Def 2.3) apply a Z-set function to each value of a stream.
The incremental forms of the non-linear operators carry state: `DistinctIncremental`
is ↑H of Prop 4.7 and `AggregateIncremental` is D∘Agg∘I restricted to changed groups.
`Integrate` and `Delay` appear explicitly, so a dump shows every integral a circuit
keeps, as in the paper's Figure 1.

Each class declares, once, the traits the rewrite rules and analyses need (below on
`Operator`), so a rule asks "is it linear?" rather than naming classes. The runtime's
evaluator table, the report's costs and the nested forms are keyed by class, and
tests/test_operator_registry.py fails when a class is missing from any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Protocol

from dbspc.compiler.circuit import compiled_loop
from dbspc.compiler.logical.aggregate import COLLECTS, AggCall, has_ordered_index, is_running_sum
from dbspc.compiler.logical.plan import OrderKey, WindowCall
from dbspc.compiler.logical.scalar import Scalar
from dbspc.compiler.types import SqlType


@dataclass(frozen=True, slots=True)
class Refused:
    """An operator that has no doubly incremental form inside a recursion scope, and why."""

    reason: str


@dataclass(frozen=True, slots=True)
class Cost:
    """What an operator keeps between steps and what a step costs it (DBSP §4.5), with
    C the size of the change at its input and R the size of the state it probes."""

    state: str
    time: str
    # What a step's cost grows with besides the change: "change" (only C, and log R),
    # "group" (the rows of each changed group or partition), "state" (the whole state or
    # input: the operator recomputes). `dbspc explain --strict` fails on "state".
    grows: str = "change"


class CostContext(Protocol):
    """What an operator's cost may ask of the circuit it sits in."""

    @property
    def incremental(self) -> bool:
        """Whether the circuit is the incremental one (its streams carry changes)."""
        ...

    def ref(self, node: int) -> str:
        """How the dump names node `node` (e.g. `%3`)."""
        ...

    def is_state(self, node: int) -> bool:
        """Whether node `node` is an integral read through z⁻¹."""
        ...

    def types_of(self, node: int) -> tuple[SqlType, ...]:
        """The column types of node `node`'s stream."""
        ...


NO_STATE = Cost("none", "O(C)")


@dataclass(frozen=True, slots=True)
class Operator:
    inputs: tuple[int, ...]
    types: tuple[SqlType, ...]

    kind: ClassVar[str] = "operator"
    # LTI: Q(a + b) = Q(a) + Q(b), so Q is its own incremental version (Thm 3.3).
    linear: ClassVar[bool] = False
    # A lifted linear operator on Z-sets that an integral is pushed through:
    # Q(I x) = I(Q x) (Prop 3.2 push/pull with Thm 3.3).
    lifted_linear: ClassVar[bool] = False
    # Keeps state between steps (owns an integral or per-group state).
    stateful: ClassVar[bool] = False
    # Positive inputs give a positive output (the premise of Props 4.5/4.6).
    keeps_positive: ClassVar[bool] = False
    # The output is positive whatever the input: a bag or a set.
    always_positive: ClassVar[bool] = False
    # Q in Prop 4.6's class: distinct(Q(distinct(i))) = distinct(Q(i)) for positive i.
    distinct_transparent: ClassVar[bool] = False
    # May read an integral through z⁻¹, probing its index instead of a plain stream.
    reads_state: ClassVar[bool] = False
    # A lifted non-linear operator that incrementalization must replace: if it survives
    # the passes, the circuit would recompute from scratch.
    needs_incremental_form: ClassVar[bool] = False
    # Only inside a scope body (evaluated by the scope), or only during lowering.
    scope_only: ClassVar[bool] = False
    lowering_only: ClassVar[bool] = False
    # Inside an incremental recursion scope (§6, Prop 6.2): "same" (LTI operators and z⁻¹
    # are their own incremental version, Thm 3.3 twice), the class of the doubly
    # incremental version (built from the same fields), or a Refused with the reason.
    nested_form: ClassVar[object] = None
    # For operators pointwise in the weight (distinct, relu): the class of the incremental
    # form that reads (z⁻¹(I d), d).
    pointwise_form: ClassVar[object] = None

    def params(self) -> str:
        """The operator's parameters as shown in dumps ('' for none)."""
        return ""

    def cost(self, ctx: CostContext) -> Cost:
        """The state it keeps and its cost per change, for the incrementality report."""
        raise NotImplementedError(f"{type(self).__name__} declares no cost")

    def nested_incremental(self) -> Operator:
        """This operator's doubly incremental version (↑(↑Q)^Δ)^Δ inside a scope (§6)."""
        form = type(self).nested_form
        if form == "same":
            return self
        if isinstance(form, type) and issubclass(form, Operator):
            return form(*(getattr(self, f.name) for f in fields(form)))
        from dbspc.compiler.errors import InternalCompilerError

        reason = form.reason if isinstance(form, Refused) else "none declared"
        raise InternalCompilerError(f"no nested incremental form for {self.kind}: {reason}")


@dataclass(frozen=True, slots=True)
class Source(Operator):
    """A base table's stream: its contents (lifted circuit) or its changes (incremental)."""

    name: str
    kind: ClassVar[str] = "source"
    always_positive: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("tables are read outside the scope")

    def params(self) -> str:
        return self.name

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Output(Operator):
    """A view's output stream."""

    name: str
    kind: ClassVar[str] = "output"
    keeps_positive: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("views are defined outside the scope")
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return self.name

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Map(Operator):
    """↑map: SELECT list / projection. Linear."""

    exprs: tuple[Scalar, ...]
    # the dialect evaluates every operand, even after a NULL one (Semantics.eager_operands)
    eager_operands: bool = False
    kind: ClassVar[str] = "map"
    lifted_linear: ClassVar[bool] = True
    keeps_positive: ClassVar[bool] = True
    distinct_transparent: ClassVar[bool] = True
    nested_form: ClassVar[object] = "same"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return ", ".join(str(e) for e in self.exprs)

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Filter(Operator):
    """↑σ_P: WHERE. Linear."""

    predicate: Scalar
    eager_operands: bool = False  # as Map's
    kind: ClassVar[str] = "filter"
    lifted_linear: ClassVar[bool] = True
    keeps_positive: ClassVar[bool] = True
    distinct_transparent: ClassVar[bool] = True
    nested_form: ClassVar[object] = "same"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return str(self.predicate)

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Plus(Operator):
    """Z-set addition of the inputs (UNION ALL). Linear."""

    kind: ClassVar[str] = "plus"
    lifted_linear: ClassVar[bool] = True
    keeps_positive: ClassVar[bool] = True
    distinct_transparent: ClassVar[bool] = True
    nested_form: ClassVar[object] = "same"
    linear: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Negate(Operator):
    """Z-set negation. Linear."""

    kind: ClassVar[str] = "negate"
    lifted_linear: ClassVar[bool] = True
    nested_form: ClassVar[object] = "same"
    linear: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Join(Operator):
    """↑⋈ on left_keys = right_keys (NULL never matches); bilinear (Thm 3.4).

    Either input may be an integrated stream z⁻¹(I x); the runtime then probes its index.
    """

    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    kind: ClassVar[str] = "join"
    keeps_positive: ClassVar[bool] = True
    distinct_transparent: ClassVar[bool] = True
    reads_state: ClassVar[bool] = True

    def params(self) -> str:
        if not self.left_keys:
            return "cross"
        return ", ".join(f"l#{a} = r#{b}" for a, b in zip(self.left_keys, self.right_keys, strict=True))

    def cost(self, ctx: CostContext) -> Cost:
        reads = [i for i in self.inputs if ctx.is_state(i)]
        if not reads and ctx.incremental:
            return Cost("none", "O(C1 × C2): change ⋈ change")
        if not self.left_keys:
            state = f"reads {ctx.ref(reads[0])}" if reads else "none"
            return Cost(state, "O(C × R): cross join probes all state", "state")
        if reads:
            return Cost(f"reads {ctx.ref(reads[0])}", "O(C log R + matches)")
        return Cost("none", "O(|left| + |right|): full join of snapshots", "state")


@dataclass(frozen=True, slots=True)
class Distinct(Operator):
    """↑distinct (set semantics)."""

    kind: ClassVar[str] = "distinct"
    always_positive: ClassVar[bool] = True
    needs_incremental_form: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(input): recomputed from the snapshot", "state")


@dataclass(frozen=True, slots=True)
class Aggregate(Operator):
    """↑(GROUP BY + aggregates), DBSP §7.3–7.4."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate"
    always_positive: ClassVar[bool] = True
    needs_incremental_form: ClassVar[bool] = True

    def params(self) -> str:
        group = ", ".join(f"#{g}" for g in self.group) or ("global" if self.is_global else "")
        return f"group=[{group}] " + ", ".join(str(a) for a in self.aggs)

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(input): recomputed from the snapshot", "state")


@dataclass(frozen=True, slots=True)
class PositivePart(Operator):
    """↑relu: m[x] ↦ max(m[x], 0). EXCEPT ALL is relu(a − b) and INTERSECT ALL is
    a − relu(a − b): bag difference and intersection on Z-sets."""

    kind: ClassVar[str] = "positive_part"
    always_positive: ClassVar[bool] = True
    needs_incremental_form: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("EXCEPT ALL and INTERSECT ALL are not supported inside recursion")

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(input): recomputed from the snapshot", "state")


@dataclass(frozen=True, slots=True)
class Constant(Operator):
    """A stream whose value is the same Z-set at every step: `rows`, each of weight 1."""

    rows: tuple[tuple[object, ...], ...]
    kind: ClassVar[str] = "constant"
    always_positive: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("constants are read outside the scope")

    def params(self) -> str:
        return f"{len(self.rows)} row(s)"

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(rows)")


@dataclass(frozen=True, slots=True)
class Delta0(Operator):
    """δ0 on the outer clock: the input's value at the first step, 0 afterwards (§5).
    A constant stream c is I(δ0(c)), so its change is δ0(c)."""

    kind: ClassVar[str] = "delta0"
    linear: ClassVar[bool] = True
    stateful: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("scope inputs are ScopeInput nodes")

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("whether the first step has run", "O(C) at the first step, O(1) after")


@dataclass(frozen=True, slots=True)
class Delay(Operator):
    """z⁻¹: the previous value of the stream (0 at time 0). Strict (Def 2.9)."""

    kind: ClassVar[str] = "delay"
    nested_form: ClassVar[object] = "same"  # the inner z⁻¹ is its own incremental version
    linear: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(f"previous value of {ctx.ref(self.inputs[0])}", "O(1)")


@dataclass(frozen=True, slots=True)
class Integrate(Operator):
    """I: running sum of the input stream, kept as a trace indexed by `key` columns."""

    key: tuple[int, ...]
    kind: ClassVar[str] = "integrate"
    nested_form: ClassVar[object] = Refused("inner integrals are implicit in the nested operators")
    linear: ClassVar[bool] = True
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return "key=[" + ", ".join(f"#{k}" for k in self.key) + "]"

    def cost(self, ctx: CostContext) -> Cost:
        key = ", ".join(f"#{k}" for k in self.key)
        return Cost(f"integral of {ctx.ref(self.inputs[0])}, indexed by [{key}]", "O(C log R) to insert")


@dataclass(frozen=True, slots=True)
class Differentiate(Operator):
    """D(s) = s − z⁻¹(s)."""

    kind: ClassVar[str] = "differentiate"
    needs_incremental_form: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("no D inside a scope")
    linear: ClassVar[bool] = True
    stateful: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(f"previous value of {ctx.ref(self.inputs[0])}", "O(C + previous value)", "state")


@dataclass(frozen=True, slots=True)
class DistinctIncremental(Operator):
    """↑H(z⁻¹(I d), d) of Prop 4.7; inputs are (z⁻¹(I d), d). Looks only at keys in d."""

    kind: ClassVar[str] = "distinct_h"
    reads_state: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("already incremental")

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(f"reads {ctx.ref(self.inputs[0])}", "O(C log R)")


@dataclass(frozen=True, slots=True)
class PositivePartIncremental(Operator):
    """(↑relu)^Δ: relu(i + d) − relu(i) for the rows x present in d, with i = z⁻¹(I d);
    inputs are (z⁻¹(I d), d), as for H (Prop 4.7, whose argument applies unchanged)."""

    kind: ClassVar[str] = "positive_part_h"
    reads_state: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("already incremental")

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(f"reads {ctx.ref(self.inputs[0])}", "O(C log R)")


@dataclass(frozen=True, slots=True)
class AggregateIncremental(Operator):
    """(↑Agg)^Δ: re-evaluates only the groups present in the change (DBSP §7.4)."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate_incremental"
    nested_form: ClassVar[object] = Refused("already incremental")
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Aggregate.params(self)  # type: ignore[arg-type]

    def cost(self, ctx: CostContext) -> Cost:
        return aggregate_cost(self.aggs, ctx.types_of(self.inputs[0]), self.group)


@dataclass(frozen=True, slots=True)
class ScopeInput(Operator):
    """Inside a scope: the scope's input `index`.

    In the lifted scope it is ↑I(δ0(x)), the outer value held constant over the inner
    clock; in the incremental scope it is δ0(Δx), the outer change at inner time 0.
    """

    index: int
    kind: ClassVar[str] = "scope_input"
    scope_only: ClassVar[bool] = True
    nested_form: ClassVar[object] = "same"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return str(self.index)

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Feedback(Operator):
    """Lowering placeholder for a recursive reference; becomes z⁻¹ of the result."""

    index: int
    kind: ClassVar[str] = "feedback"
    lowering_only: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("replaced by z⁻¹ when the scope closes")

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class Scope(Operator):
    """A nested circuit iterated to its fixpoint at every outer step (§5.1).

    `body` is the inner arena (ids index into it); the inner z⁻¹ nodes carry the feedback
    edges. `results[k]` is the inner node holding CTE `names[k]`. The outer value is a
    tuple of results, read with `ScopeOutput`.
    """

    body: tuple[Operator, ...]
    results: tuple[int, ...]
    names: tuple[str, ...]
    max_level: int | None = None  # MAX RECURSION LEVEL, else the run's limit
    kind: ClassVar[str] = "scope"
    needs_incremental_form: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("inner recursions are hoisted out as scope inputs")

    def params(self) -> str:
        return ", ".join(self.names) + (f", max level {self.max_level}" if self.max_level is not None else "")

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(iterations × input): naive fixpoint from scratch", "state")


@dataclass(frozen=True, slots=True)
class ScopeIncremental(Operator):
    """Circuit (6.1): ΔO = ↑∫(fix α.(↑(↑T)^Δ)^Δ(↑δ0(ΔI), ↑z⁻¹α)).

    Its inner operators are doubly incremental and keep, for every inner iteration, the
    state of earlier outer steps, so each outer step only works on what changed.
    """

    body: tuple[Operator, ...]
    results: tuple[int, ...]
    names: tuple[str, ...]
    max_level: int | None = None
    kind: ClassVar[str] = "scope_incremental"
    nested_form: ClassVar[object] = Refused("inner recursions are hoisted out as scope inputs")
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return ", ".join(self.names) + (f", max level {self.max_level}" if self.max_level is not None else "")

    def cost(self, ctx: CostContext) -> Cost:
        inner = [b.kind for b in self.body if b.stateful]
        counts = ", ".join(f"{inner.count(k)} {k}" for k in sorted(set(inner)))
        why = compiled_loop.blocker(self)
        loop = "inner loop compiled" if why is None else f"inner loop interpreted ({why})"
        return Cost(
            f"per-iteration traces of every earlier step ({counts}), indexed by key",
            f"O(iterations × C log R): each inner iteration touches only the step's changes; {loop}",
        )


@dataclass(frozen=True, slots=True)
class ScopeOutput(Operator):
    """Result `index` of a scope (the ∫ at the scope's exit). Linear."""

    index: int
    name: str
    kind: ClassVar[str] = "scope_output"
    lifted_linear: ClassVar[bool] = True
    always_positive: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("inner recursions are hoisted out as scope inputs")
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return self.name

    def cost(self, ctx: CostContext) -> Cost:
        return NO_STATE


@dataclass(frozen=True, slots=True)
class JoinNested(Operator):
    """The doubly incremental join inside an incremental scope, four terms (§6):
    a⋈I(↑I b) + z⁻¹(I a)⋈↑I b + ↑z⁻¹(↑I a)⋈I b + z⁻¹(↑z⁻¹(I(↑I a)))⋈b."""

    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    kind: ClassVar[str] = "join_nested"
    scope_only: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("already doubly incremental")
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Join.params(self)  # type: ignore[arg-type]

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("iteration traces of both inputs, indexed by the join key", "O(C log R + matches) per iteration")


@dataclass(frozen=True, slots=True)
class DistinctNested(Operator):
    """(↑(↑distinct)^Δ)^Δ: distinct over a doubly differenced stream; it looks only at
    the rows changed in the current outer step."""

    kind: ClassVar[str] = "distinct_nested"
    scope_only: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("already doubly incremental")
    stateful: ClassVar[bool] = True

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("iteration trace of the input, indexed by the row", "O(C log R) per iteration")


@dataclass(frozen=True, slots=True)
class AggregateNested(Operator):
    """(↑(↑Agg)^Δ)^Δ: re-aggregates only the groups changed in the current outer step."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate_nested"
    scope_only: ClassVar[bool] = True
    nested_form: ClassVar[object] = Refused("already doubly incremental")
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Aggregate.params(self)  # type: ignore[arg-type]

    def cost(self, ctx: CostContext) -> Cost:
        return aggregate_cost(self.aggs)


def _window_params(o: Window | WindowIncremental) -> str:
    part = ", ".join(f"#{p}" for p in o.partition)
    order = ", ".join(str(k) for k in o.order)
    text = f"partition=[{part}] order=[{order}] " + ", ".join(str(c) for c in o.calls)
    return text if o.limit is None else f"{text} limit={o.limit}"


_WINDOW_REFUSED = Refused("window functions and top-k are not monotone; no recursion through them")


@dataclass(frozen=True, slots=True)
class Window(Operator):
    """↑window: the input's rows, each with its window functions' values. Not linear:
    a row's values depend on its whole partition."""

    partition: tuple[int, ...]
    order: tuple[OrderKey, ...]
    calls: tuple[WindowCall, ...]
    limit: int | None = None  # only rows numbered <= limit in their partition (top-k)
    kind: ClassVar[str] = "window"
    always_positive: ClassVar[bool] = True
    needs_incremental_form: ClassVar[bool] = True
    nested_form: ClassVar[object] = _WINDOW_REFUSED

    def params(self) -> str:
        return _window_params(self)

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(input log input): recomputed from the snapshot", "state")


@dataclass(frozen=True, slots=True)
class WindowIncremental(Operator):
    """(↑window)^Δ; inputs are (z⁻¹(I d) indexed by the partition columns, d). The output
    is a function of each partition's contents, so for every partition the change
    touches it retracts the partition's old output and emits its new one."""

    partition: tuple[int, ...]
    order: tuple[OrderKey, ...]
    calls: tuple[WindowCall, ...]
    limit: int | None = None  # only rows numbered <= limit in their partition (top-k)
    kind: ClassVar[str] = "window_incremental"
    reads_state: ClassVar[bool] = True
    nested_form: ClassVar[object] = _WINDOW_REFUSED

    def params(self) -> str:
        return _window_params(self)

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(
            f"reads {ctx.ref(self.inputs[0])}",
            "O(C log R + P log P), P the rows of the changed partitions: each is re-sorted and re-evaluated",
            "group",
        )


@dataclass(frozen=True, slots=True)
class TopK(Operator):
    """↑topk: the input's rows numbered by ROW_NUMBER() OVER (PARTITION BY partition
    ORDER BY order), ties broken by all columns, keeping those numbered <= limit: a
    Window with one ROW_NUMBER and a bound on it (ORDER BY ... LIMIT, or rn <= k)."""

    partition: tuple[int, ...]
    order: tuple[OrderKey, ...]
    limit: int
    kind: ClassVar[str] = "topk"
    always_positive: ClassVar[bool] = True
    needs_incremental_form: ClassVar[bool] = True
    nested_form: ClassVar[object] = _WINDOW_REFUSED

    def params(self) -> str:
        part = ", ".join(f"#{p}" for p in self.partition)
        order = ", ".join(str(k) for k in self.order)
        return f"partition=[{part}] order=[{order}] limit={self.limit}"

    def cost(self, ctx: CostContext) -> Cost:
        return Cost("none", "O(input log input): recomputed from the snapshot", "state")


@dataclass(frozen=True, slots=True)
class TopKIncremental(Operator):
    """(↑topk)^Δ: per changed partition, topk(P_old + ΔP) − topk(P_old), reading only
    the first limit rows of each changed partition from its own sorted integral."""

    partition: tuple[int, ...]
    order: tuple[OrderKey, ...]
    limit: int
    kind: ClassVar[str] = "topk_incremental"
    stateful: ClassVar[bool] = True
    nested_form: ClassVar[object] = _WINDOW_REFUSED

    def params(self) -> str:
        return TopK.params(self)  # type: ignore[arg-type]

    def cost(self, ctx: CostContext) -> Cost:
        return Cost(
            "the input integral (a delete promotes the next row), sorted by (partition, ORDER BY keys, all columns)",
            "O(|Δ| log n + k) per changed partition and run (O(log n) runs), k the limit, one more row read "
            "per row of the change among the first k; run merges amortised O(log n) sorts per row",
        )


def aggregate_cost(
    aggs: tuple[AggCall, ...], in_types: tuple[SqlType, ...] | None = None, group: tuple[int, ...] = ()
) -> Cost:
    """What runtime/kernels/aggregate.py keeps, given the input's types (`in_types`) and
    group columns. COUNT/SUM/AVG keep running sums (§7.2, `is_running_sum`). MIN/MAX keep
    a value multiset and the emitted rows: a step reads the old extremes, and re-reads a
    group only when one of them is deleted, unless the values are also kept in order per
    group (`has_ordered_index`: then never, and grouped ones read the old extremes there
    too, keeping no emitted rows). The other aggregates over a multiset
    (DISTINCT ones, float SUM/AVG, moments, collects) re-read each changed group.
    Without `in_types` (the nested scopes' aggregate) every MIN/MAX re-reads its groups."""

    def in_type(a: AggCall) -> SqlType | None:
        return None if in_types is None or a.arg is None else in_types[a.arg]

    def float_sum(a: AggCall) -> bool:
        t = in_type(a)
        return a.fn in ("sum", "avg") and t is not None and t.is_float

    linear = [a for a in aggs if is_running_sum(a, in_type(a))]
    multiset = [a for a in aggs if a not in linear]
    collects = sorted({a.fn for a in multiset if a.fn in COLLECTS})
    parts = ["running sums per group"] if linear else []
    if not multiset:
        return Cost(", ".join(parts), "O(C log R)")
    if in_types is not None and all(a.fn in ("min", "max") for a in multiset):
        group_types = [in_types[g] for g in group]
        if all(has_ordered_index(group_types, in_type(a)) for a in multiset):
            # grouped, the old extremes come from the ordered values: no emitted rows
            kept = (
                "value multiset and the values in order"
                if group
                else "value multiset, the values in order and emitted rows"
            )
            parts.append(f"{kept} per group (MIN/MAX)")
            return Cost(", ".join(parts), "O(C log R)")
        parts.append("value multiset and emitted rows per group (MIN/MAX)")
        return Cost(", ".join(parts), "O(C log R); a changed group's size when its MIN or MAX is deleted", "group")
    if any(a.fn not in COLLECTS for a in multiset):
        named = sorted({a.fn.upper() + (" DISTINCT" if a.distinct else "") for a in multiset if a.fn not in COLLECTS})
        parts.append(f"value multiset per group ({'/'.join(named)})")
        if any(float_sum(a) for a in multiset):
            parts.append("emitted rows per group")  # float sums: retract the bits emitted
    if collects:
        # a changed group's whole array is retracted and re-emitted
        parts.append("value multiset per group (" + "/".join(collects) + ")")
        return Cost(", ".join(parts), "O(C log R + elements of changed groups)", "group")
    return Cost(", ".join(parts), "O(C log R + size of changed groups)", "group")


# Declared after the classes they name.
# The incremental form of an operator whose output at row x depends only on its input's
# weight at x: it looks only at the rows of the change, probing z⁻¹(I d) (Prop 4.7).
Distinct.pointwise_form = DistinctIncremental
PositivePart.pointwise_form = PositivePartIncremental
Join.nested_form = JoinNested
Distinct.nested_form = DistinctNested
Aggregate.nested_form = AggregateNested


def operator_classes() -> list[type[Operator]]:
    """Every concrete operator class, in definition order."""
    return [
        cls for cls in globals().values() if isinstance(cls, type) and issubclass(cls, Operator) and cls is not Operator
    ]

"""The operators of a DBSP circuit: the paper's primitives, as frozen dataclasses.

`Lifted` operators (Def 2.3) apply a Z-set function to each value of a stream.
`linear` marks the LTI ones, which are their own incremental version (Thm 3.3).
The incremental forms of the non-linear operators carry state: `DistinctIncremental`
is ↑H of Prop 4.7 and `AggregateIncremental` is D∘Agg∘I restricted to changed groups.
`Integrate` and `Delay` appear explicitly, so a dump shows every integral a circuit
keeps, as in the paper's Figure 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from compiler.logical.aggregate import AggCall
from compiler.logical.scalar import Scalar
from compiler.types import SqlType


@dataclass(frozen=True, slots=True)
class Operator:
    inputs: tuple[int, ...]
    types: tuple[SqlType, ...]

    kind: ClassVar[str] = "operator"
    linear: ClassVar[bool] = False
    # Operators that keep state between steps (they own an integral).
    stateful: ClassVar[bool] = False

    def params(self) -> str:
        """The operator's parameters as shown in dumps ('' for none)."""
        return ""


@dataclass(frozen=True, slots=True)
class Source(Operator):
    """A base table's stream: its contents (lifted circuit) or its changes (incremental)."""

    name: str
    kind: ClassVar[str] = "source"

    def params(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Output(Operator):
    """A view's output stream."""

    name: str
    kind: ClassVar[str] = "output"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Map(Operator):
    """↑map: SELECT list / projection. Linear."""

    exprs: tuple[Scalar, ...]
    kind: ClassVar[str] = "map"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return ", ".join(str(e) for e in self.exprs)


@dataclass(frozen=True, slots=True)
class Filter(Operator):
    """↑σ_P: WHERE. Linear."""

    predicate: Scalar
    kind: ClassVar[str] = "filter"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return str(self.predicate)


@dataclass(frozen=True, slots=True)
class Plus(Operator):
    """Z-set addition of the inputs (UNION ALL). Linear."""

    kind: ClassVar[str] = "plus"
    linear: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Negate(Operator):
    """Z-set negation. Linear."""

    kind: ClassVar[str] = "negate"
    linear: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Join(Operator):
    """↑⋈ on left_keys = right_keys (NULL never matches); bilinear (Thm 3.4).

    Either input may be an integrated stream z⁻¹(I x); the runtime then probes its index.
    """

    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    kind: ClassVar[str] = "join"

    def params(self) -> str:
        if not self.left_keys:
            return "cross"
        return ", ".join(f"l#{a} = r#{b}" for a, b in zip(self.left_keys, self.right_keys, strict=True))


@dataclass(frozen=True, slots=True)
class Distinct(Operator):
    """↑distinct (set semantics)."""

    kind: ClassVar[str] = "distinct"


@dataclass(frozen=True, slots=True)
class Aggregate(Operator):
    """↑(GROUP BY + aggregates), DBSP §7.3–7.4."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate"

    def params(self) -> str:
        group = ", ".join(f"#{g}" for g in self.group) or ("global" if self.is_global else "")
        return f"group=[{group}] " + ", ".join(str(a) for a in self.aggs)


@dataclass(frozen=True, slots=True)
class Delay(Operator):
    """z⁻¹: the previous value of the stream (0 at time 0). Strict (Def 2.9)."""

    kind: ClassVar[str] = "delay"
    linear: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class Integrate(Operator):
    """I: running sum of the input stream, kept as a trace indexed by `key` columns."""

    key: tuple[int, ...]
    kind: ClassVar[str] = "integrate"
    linear: ClassVar[bool] = True
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return "key=[" + ", ".join(f"#{k}" for k in self.key) + "]"


@dataclass(frozen=True, slots=True)
class Differentiate(Operator):
    """D(s) = s − z⁻¹(s)."""

    kind: ClassVar[str] = "differentiate"
    linear: ClassVar[bool] = True
    stateful: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class DistinctIncremental(Operator):
    """↑H(z⁻¹(I d), d) of Prop 4.7; inputs are (z⁻¹(I d), d). Looks only at keys in d."""

    kind: ClassVar[str] = "distinct_h"


@dataclass(frozen=True, slots=True)
class AggregateIncremental(Operator):
    """(↑Agg)^Δ: re-evaluates only the groups present in the change (DBSP §7.4)."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate_incremental"
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Aggregate.params(self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Delta0(Operator):
    """δ0: the value at outer time t enters the nested clock at inner time 0 (§5)."""

    kind: ClassVar[str] = "delta0"
    linear: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class NestedIntegral(Operator):
    """∫: the sum of an inner stream that is zero almost everywhere (§5)."""

    kind: ClassVar[str] = "nested_integral"
    linear: ClassVar[bool] = True


# -- recursion: nested scopes (DBSP §5, §6) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScopeInput(Operator):
    """Inside a scope: the scope's input `index`.

    In the lifted scope it is ↑I(δ0(x)), the outer value held constant over the inner
    clock; in the incremental scope it is δ0(Δx), the outer change at inner time 0.
    """

    index: int
    kind: ClassVar[str] = "scope_input"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return str(self.index)


@dataclass(frozen=True, slots=True)
class Feedback(Operator):
    """Lowering placeholder for a recursive reference; becomes z⁻¹ of the result."""

    index: int
    kind: ClassVar[str] = "feedback"


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
    kind: ClassVar[str] = "scope"

    def params(self) -> str:
        return ", ".join(self.names)


@dataclass(frozen=True, slots=True)
class ScopeIncremental(Operator):
    """Circuit (6.1): ΔO = ↑∫(fix α.(↑(↑T)^Δ)^Δ(↑δ0(ΔI), ↑z⁻¹α)).

    Its inner operators are doubly incremental and keep, for every inner iteration, the
    state of earlier outer steps, so each outer step only works on what changed.
    """

    body: tuple[Operator, ...]
    results: tuple[int, ...]
    names: tuple[str, ...]
    kind: ClassVar[str] = "scope_incremental"
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return ", ".join(self.names)


@dataclass(frozen=True, slots=True)
class ScopeOutput(Operator):
    """Result `index` of a scope (the ∫ at the scope's exit). Linear."""

    index: int
    name: str
    kind: ClassVar[str] = "scope_output"
    linear: ClassVar[bool] = True

    def params(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class JoinNested(Operator):
    """The doubly incremental join inside an incremental scope, four terms (§6):
    a⋈I(↑I b) + z⁻¹(I a)⋈↑I b + ↑z⁻¹(↑I a)⋈I b + z⁻¹(↑z⁻¹(I(↑I a)))⋈b."""

    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    kind: ClassVar[str] = "join_nested"
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Join.params(self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class DistinctNested(Operator):
    """(↑(↑distinct)^Δ)^Δ: distinct over a doubly differenced stream; it looks only at
    the rows changed in the current outer step."""

    kind: ClassVar[str] = "distinct_nested"
    stateful: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class AggregateNested(Operator):
    """(↑(↑Agg)^Δ)^Δ: re-aggregates only the groups changed in the current outer step."""

    group: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    is_global: bool
    kind: ClassVar[str] = "aggregate_nested"
    stateful: ClassVar[bool] = True

    def params(self) -> str:
        return Aggregate.params(self)  # type: ignore[arg-type]

"""The runtime's one table: for each operator class, how a step evaluates it.

Each kernel module registers the operators it implements with `@evaluates(cls)`, next
to its kernels; the executor and the recursion scopes look operators up here, so no
evaluation is dispatched by `isinstance` chains. tests/test_operator_registry.py fails
when an operator class of compiler/circuit/operators.py has no entry.

An evaluator is a function `(ctx, op, args) -> value`. Stateful operators also give a
`state` factory; the state object keeps what the operator integrates across steps and
is changed only by the commit closures an evaluation appends to `ctx.commits`, which the
executor runs after every operator of the step succeeded (atomic steps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.errors import InternalCompilerError
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet

Value = ZSet | Trace | list[ZSet]  # a list: the results of a recursion scope
Commit = Callable[[], None]


class OperatorState(Protocol):
    """What a stateful operator keeps between steps."""

    def traces(self) -> dict[str, Trace]:
        """Every piece of state by a stable name ('' for a single trace), for checkpoints."""
        ...

    def state_rows(self) -> int: ...

    def state_bytes(self) -> int:
        """Memory held: the columns' Arrow size plus the indexes beside them."""
        ...

    def meta(self) -> Any:
        """JSON-able facts beside the traces that a restore needs (None if none)."""
        ...

    def restored(self, meta: Any) -> None:
        """Finish a restore: the traces were refilled from a checkpoint."""
        ...


@dataclass(frozen=True, slots=True)
class Setup:
    """What a state factory may know about the circuit it runs in."""

    circuit: Circuit
    node: int
    what: str  # the view the operator feeds, for error messages
    max_iterations: int


@dataclass(slots=True)
class Context:
    """What an evaluator sees besides its operator and input values."""

    node: int
    what: str
    state: Any = None
    commits: list[Commit] = field(default_factory=list)
    sources: Mapping[str, ZSet] = field(default_factory=dict)
    max_iterations: int = 0  # of a recursion scope evaluated from scratch
    # inner iterations each recursion scope ran at this step
    iterations: dict[int, int] = field(default_factory=dict)
    # every reader of the output sums equal rows itself (executor.SUMMING_READERS), so the
    # operator may leave them apart instead of consolidating a batch twice
    loose: bool = False


Evaluate = Callable[[Context, Any, list[Value]], Value]


@dataclass(frozen=True, slots=True)
class Evaluator:
    evaluate: Evaluate
    state: Callable[[Setup], OperatorState] | None = None
    # the checkpoint name of the state: n<node>.<state_name>[.<trace name>]
    state_name: str = ""


EVALUATORS: dict[type[op.Operator], Evaluator] = {}


def evaluates(
    cls: type[op.Operator], *, state: Callable[[Setup], Any] | None = None, state_name: str = ""
) -> Callable[[Evaluate], Evaluate]:
    """Register `fn` as the evaluator of operator class `cls` (once per class)."""

    def register(fn: Evaluate) -> Evaluate:
        if cls in EVALUATORS:
            raise InternalCompilerError(f"{cls.__name__} has two evaluators")
        EVALUATORS[cls] = Evaluator(fn, state, state_name or cls.kind)
        return fn

    return register


def evaluator(o: op.Operator) -> Evaluator:
    found = EVALUATORS.get(type(o))
    if found is None:
        raise InternalCompilerError(f"the runtime cannot evaluate {o.kind}")
    return found


def evaluate_stateless(o: op.Operator, args: list[Value], what: str) -> Value:
    """Evaluate an operator that keeps no state (linear and lifted operators), e.g.
    inside a recursion scope, through the same table the executor uses."""
    e = evaluator(o)
    if e.state is not None:
        raise InternalCompilerError(f"{o.kind} keeps state and cannot run inside this scope")
    return e.evaluate(Context(-1, what), o, args)


def as_zset(v: Value) -> ZSet:
    if not isinstance(v, ZSet):
        raise InternalCompilerError("an integral was read as a plain stream")
    return v

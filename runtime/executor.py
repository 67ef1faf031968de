"""Steps a circuit: one evaluation of every operator per input batch, in topological order.

A stream's value during a step is a `ZSet` (a change, or a snapshot in the lifted
circuit) or a `Trace` (an integral read through z⁻¹). Every operator is evaluated
through the one table of runtime/registry.py. State changes are collected and applied
only after every operator succeeded, so a step that fails leaves all state as it was:
the same step can be retried after the input is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dbspc.runtime.kernels  # noqa: F401  (registers the kernels' evaluators)
from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit, consumers_of
from dbspc.runtime.kernels.linear import columns_and_nulls
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.registry import Context, OperatorState, Setup, Value, as_zset, evaluates, evaluator
from dbspc.runtime.trace import Trace, merges_owed, settle_owed
from dbspc.runtime.zset import ZSet

# Called with an operator and its input values just before it is evaluated; it may raise
# to stop the step (nothing is committed then). Harnesses use it to bound intermediates.
BeforeOperator = Callable[[op.Operator, list[Value]], None]

# Readers that sum a batch's equal rows themselves: a sum consolidates its terms, an
# integral's insert and a view's output consolidate what they get, and an aggregate sums
# its change per group (its multisets consolidate it; its arguments are columns, so it
# evaluates nothing on rows that would have cancelled). An operator read by these alone
# need not consolidate its output first (Context.loose).
SUMMING_READERS: tuple[type[op.Operator], ...] = (op.Plus, op.Integrate, op.Output, op.AggregateIncremental)


def passes_rows_on(o: op.Operator) -> bool:
    """Whether `o` maps each row to one row by itself, evaluating nothing that could fail:
    a projection (with NULL columns), a negation. Read by summing readers alone, it may
    pass equal rows on unsummed (a linear operator: Q(a + b) = Q(a) + Q(b)). An
    expression may not: on rows that would have cancelled (a pair of a deleted and an
    inserted row) it could raise an error that the view's rows never meet."""
    if isinstance(o, op.Map):
        return columns_and_nulls(o.exprs)
    return isinstance(o, op.Negate)


class Executor:
    def __init__(
        self,
        circuit: Circuit,
        names: dict[int, str] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        before_operator: BeforeOperator | None = None,
    ) -> None:
        circuit.validate()
        self.circuit = circuit
        self.before_operator = before_operator
        live = circuit.live()
        self.order = [n for n in circuit.topological_order() if n in live]
        readers = consumers_of(circuit.nodes)
        self.loose: set[int] = set()
        for n in reversed(self.order):  # (readers first)
            read_by = [r for r in readers[n] if r in live]
            if read_by and all(
                type(circuit[r]) in SUMMING_READERS or (r in self.loose and passes_rows_on(circuit[r])) for r in read_by
            ):
                self.loose.add(n)
        # what a runtime error names: the view an operator feeds
        self.names = names or {}
        self.max_iterations = max_iterations
        self.evaluators = {n: evaluator(circuit[n]) for n in self.order}
        self.states: dict[int, OperatorState] = {}
        for n, e in self.evaluators.items():
            if e.state is not None:
                self.states[n] = e.state(Setup(circuit, n, self.names.get(n, "view"), max_iterations))
        # inner iterations each scope ran at the last step (the from-scratch count when lifted)
        self.iterations: dict[int, int] = {}
        self.steps = 0

    def step(self, inputs: dict[str, ZSet]) -> dict[str, ZSet]:
        """Evaluate once; returns each output's value. Atomic: all state or none changes."""
        settle_owed()
        values: dict[int, Value] = {}
        commits: list[Callable[[], None]] = []
        for n in self.order:
            values[n] = self.evaluate(n, [values[i] for i in self.circuit[n].inputs], commits, inputs)
        with merges_owed():  # (the merges are made once the outputs are out)
            for commit in commits:
                commit()
            self.steps += 1
            outputs: dict[str, ZSet] = {}
            for n in self.order:
                o = self.circuit[n]
                if isinstance(o, op.Output):
                    outputs[o.name] = as_zset(values[n]).consolidate()
        return outputs

    def evaluate(self, n: int, args: list[Value], commits: list[Callable[[], None]], sources: dict[str, ZSet]) -> Value:
        """Node `n`'s value from its inputs' values, through the evaluator table; its state
        changes are appended to `commits`."""
        o = self.circuit[n]
        if self.before_operator is not None:
            self.before_operator(o, args)
        what = self.names.get(n, "view")
        state = self.states.get(n)
        ctx = Context(n, what, state, commits, sources, self.max_iterations, self.iterations, n in self.loose)
        return self.evaluators[n].evaluate(ctx, o, args)

    def traces(self) -> dict[str, Trace]:
        """All operator state by stable names (node ids are deterministic per program)."""
        out: dict[str, Trace] = {}
        for n, state in self.states.items():
            base = f"n{n}.{self.evaluators[n].state_name}"
            out.update({f"{base}.{k}" if k else base: t for k, t in state.traces().items()})
        return out

    def table_integrals(self) -> dict[str, tuple[str, Trace]]:
        """Per table, the trace of `Circuit.table_integrals`'s integral of it, by its
        name in `traces()`: a pipeline's delete checks read it instead of keeping the
        table a second time."""
        out: dict[str, tuple[str, Trace]] = {}
        for table, n in self.circuit.table_integrals().items():
            state = self.states[n]
            assert isinstance(state, Integral)
            out[table] = (f"n{n}.{self.evaluators[n].state_name}", state.trace)
        return out

    def meta(self) -> dict[str, object]:
        metas = {str(n): m for n, s in self.states.items() if (m := s.meta()) is not None}
        return {"steps": self.steps, "operators": metas}

    def restored(self, meta: dict[str, Any]) -> None:
        """Finish a restore: the caller has refilled every trace of `traces()`."""
        self.steps = int(meta["steps"])
        metas = meta.get("operators", {})
        for n, state in self.states.items():
            state.restored(metas.get(str(n)))

    def state_rows(self) -> int:
        """Rows held in all integrals and operator states."""
        return sum(s.state_rows() for s in self.states.values())

    def state_sizes(self) -> dict[int, tuple[int, int]]:
        """(rows, bytes) of state per stateful operator, by node id."""
        return {n: (s.state_rows(), s.state_bytes()) for n, s in self.states.items()}


# -- the structural operators: sources, outputs, integrals and delays ------------------------


@evaluates(op.Source)
def _source(ctx: Context, o: op.Source, args: list[Value]) -> Value:
    return ctx.sources.get(o.name) or ZSet.empty(o.types)


@evaluates(op.Output)
def _output(ctx: Context, o: op.Output, args: list[Value]) -> Value:
    return as_zset(args[0])


@dataclass
class Integral:
    """I: the running sum of a stream, as a trace indexed by the operator's key."""

    trace: Trace

    def traces(self) -> dict[str, Trace]:
        return {"": self.trace}

    def state_rows(self) -> int:
        return len(self.trace)

    def state_bytes(self) -> int:
        return self.trace.nbytes()

    def meta(self) -> None:
        return None

    def restored(self, meta: object) -> None:
        pass


def _integral(setup: Setup) -> Integral:
    o = setup.circuit[setup.node]
    assert isinstance(o, op.Integrate)
    return Integral(Trace(o.types, o.key))


@evaluates(op.Integrate, state=_integral)
def _integrate(ctx: Context, o: op.Integrate, args: list[Value]) -> Value:
    trace, delta = ctx.state.trace, as_zset(args[0])
    ctx.commits.append(lambda: trace.insert(delta))
    return trace


@dataclass
class Previous:
    """The value of a plain stream at the previous step (z⁻¹ or D of a non-integral)."""

    value: ZSet | None = None

    def traces(self) -> dict[str, Trace]:
        return {}

    def state_rows(self) -> int:
        return 0 if self.value is None else len(self.value)

    def state_bytes(self) -> int:
        return 0 if self.value is None else int(self.value.frame.estimated_size())

    def meta(self) -> None:
        return None

    def restored(self, meta: object) -> None:
        pass


def _previous(setup: Setup) -> Previous:
    return Previous()


@evaluates(op.Delay, state=_previous)
def _delay(ctx: Context, o: op.Delay, args: list[Value]) -> Value:
    """z⁻¹ (Def 2.5). Of an integral: the trace as of the end of the previous step (the
    integral's own commit comes after every operator). Of a plain stream: its last value."""
    if isinstance(args[0], Trace):
        return args[0]
    state: Previous = ctx.state
    now = as_zset(args[0])
    ctx.commits.append(lambda: setattr(state, "value", now))
    return state.value if state.value is not None else ZSet.empty(o.types)


@evaluates(op.Differentiate, state=_previous)
def _differentiate(ctx: Context, o: op.Differentiate, args: list[Value]) -> Value:
    """D(s) = s − z⁻¹(s) (§2), keeping the previous value."""
    state: Previous = ctx.state
    now = as_zset(args[0])
    ctx.commits.append(lambda: setattr(state, "value", now))
    if state.value is None:
        return now
    return ZSet.concat([now, state.value.negate()], o.types).consolidate()


@evaluates(op.Constant)
def _constant(ctx: Context, o: op.Constant, args: list[Value]) -> Value:
    # Built once per operator (by identity: rows that compare equal, as -0.0 and 0.0, may
    # differ): a step evaluates it again though δ0 reads it only at the first, and 6% of a
    # sqllogictest run rebuilt constants' frames from Python rows.
    hit = _CONSTANTS.get(id(o))
    if hit is not None and hit[0] is o:
        return hit[1]
    if len(_CONSTANTS) >= 1024:
        _CONSTANTS.clear()
    z = ZSet.from_rows(o.rows, o.types)
    _CONSTANTS[id(o)] = (o, z)
    return z


_CONSTANTS: dict[int, tuple[op.Constant, ZSet]] = {}


@dataclass
class Started:
    """Whether the first step has been committed."""

    started: bool = False

    def traces(self) -> dict[str, Trace]:
        return {}

    def state_rows(self) -> int:
        return 0

    def state_bytes(self) -> int:
        return 0

    def meta(self) -> bool:
        return self.started

    def restored(self, meta: object) -> None:
        self.started = bool(meta)


def _started(setup: Setup) -> Started:
    return Started()


@evaluates(op.Delta0, state=_started)
def _delta0(ctx: Context, o: op.Delta0, args: list[Value]) -> Value:
    """δ0: the input at the first step, then 0."""
    state: Started = ctx.state
    if state.started:
        return ZSet.empty(o.types)
    ctx.commits.append(lambda: setattr(state, "started", True))
    return as_zset(args[0])

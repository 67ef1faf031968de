"""Steps a circuit: one evaluation of every operator per input batch, in topological order.

A stream's value during a step is a `ZSet` (a change, or a snapshot in the lifted
circuit) or a `Trace` (an integral read through z⁻¹). State changes are collected and
applied only after every operator succeeded, so a step that fails leaves all state as
it was: the same step can be retried after the input is fixed.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.circuit import operators as op
from compiler.circuit.circuit import Circuit
from compiler.errors import InternalCompilerError
from runtime.kernels.aggregate import IncrementalAggregate, aggregate
from runtime.kernels.distinct import distinct, distinct_delta
from runtime.kernels.join import join, join_with_trace
from runtime.kernels.linear import filter_rows, map_rows, negate, plus
from runtime.nested import DEFAULT_MAX_ITERATIONS, IncrementalScope, evaluate_scope
from runtime.trace import Trace
from runtime.zset import ZSet

Value = ZSet | Trace | list[ZSet]  # a list: the results of a recursion scope
Commit = Callable[[], None]
# Called with an operator and its input values just before it is evaluated; it may raise
# to stop the step (nothing is committed then). Harnesses use it to bound intermediates.
BeforeOperator = Callable[[op.Operator, list[Value]], None]


class Executor:
    def __init__(
        self,
        circuit: Circuit,
        names: dict[int, str] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        before_operator: BeforeOperator | None = None,
    ) -> None:
        circuit.validate()
        self.before_operator = before_operator
        self.circuit = circuit
        live = circuit.live()
        self.order = [n for n in circuit.topological_order() if n in live]
        # what a runtime error names: the view an operator feeds
        self.names = names or {}
        self.traces_by_node: dict[int, Trace] = {}
        self.aggregates: dict[int, IncrementalAggregate] = {}
        self.scopes: dict[int, IncrementalScope] = {}
        self.max_iterations = max_iterations
        # inner iterations each scope ran at the last step (the from-scratch count when lifted)
        self.iterations: dict[int, int] = {}
        for n in self.order:
            o = circuit[n]
            if isinstance(o, op.Integrate):
                self.traces_by_node[n] = Trace(o.types, o.key)
            elif isinstance(o, op.AggregateIncremental):
                src = circuit[o.inputs[0]]
                self.aggregates[n] = IncrementalAggregate(src.types, o.group, o.aggs, o.types, o.is_global)
            elif isinstance(o, op.ScopeIncremental):
                self.scopes[n] = IncrementalScope(o, self.names.get(n, "view"), max_iterations)
            elif isinstance(o, op.Differentiate | op.Delay) and not isinstance(circuit[o.inputs[0]], op.Integrate):
                raise InternalCompilerError(f"%{n} {o.kind} of a plain stream is not supported by the runtime")
        self.steps = 0

    def step(self, inputs: dict[str, ZSet]) -> dict[str, ZSet]:
        """Evaluate once; returns each output's value. Atomic: all state or none changes."""
        values: dict[int, Value] = {}
        commits: list[Commit] = []
        for n in self.order:
            values[n] = self._evaluate(n, values, inputs, commits)
        for commit in commits:
            commit()
        self.steps += 1
        outputs: dict[str, ZSet] = {}
        for n in self.order:
            o = self.circuit[n]
            if isinstance(o, op.Output):
                v = values[n]
                assert isinstance(v, ZSet)
                outputs[o.name] = v.consolidate()
        return outputs

    def traces(self) -> dict[str, Trace]:
        """All operator state by stable names (node ids are deterministic per program)."""
        out: dict[str, Trace] = {f"n{n}.integrate": t for n, t in self.traces_by_node.items()}
        for n, agg in self.aggregates.items():
            out.update({f"n{n}.aggregate.{k}": t for k, t in agg.traces().items()})
        for n, scope in self.scopes.items():
            out.update({f"n{n}.scope.{k}": t for k, t in scope.traces().items()})
        return out

    def meta(self) -> dict[str, object]:
        return {"steps": self.steps, "aggregates_started": sorted(n for n, a in self.aggregates.items() if a.started)}

    def restored(self, meta: dict[str, object]) -> None:
        """Finish a restore: the caller has refilled every trace of `traces()`."""
        self.steps = int(meta["steps"])  # type: ignore[call-overload]
        started = set(meta["aggregates_started"])  # type: ignore[call-overload]
        for n, agg in self.aggregates.items():
            agg.started = n in started
        for scope in self.scopes.values():
            scope.restored()

    def state_rows(self) -> int:
        """Rows held in all integrals and aggregate states."""
        return (
            sum(len(t) for t in self.traces_by_node.values())
            + sum(a.state_size() for a in self.aggregates.values())
            + sum(s.state_rows() for s in self.scopes.values())
        )

    def _evaluate(self, n: int, values: dict[int, Value], inputs: dict[str, ZSet], commits: list[Commit]) -> Value:
        o = self.circuit[n]
        args = [values[i] for i in o.inputs]
        if self.before_operator is not None:
            self.before_operator(o, args)
        what = self.names.get(n, "view")
        if isinstance(o, op.Source):
            return inputs.get(o.name) or ZSet.empty(o.types)
        if isinstance(o, op.Output):
            return _zset(args[0])
        if isinstance(o, op.Map):
            return map_rows(_zset(args[0]), o.exprs, o.types, what)
        if isinstance(o, op.Filter):
            return filter_rows(_zset(args[0]), o.predicate, what)
        if isinstance(o, op.Plus):
            return plus([_zset(a) for a in args], o.types)
        if isinstance(o, op.Negate):
            return negate(_zset(args[0]))
        if isinstance(o, op.Integrate):
            trace, delta = self.traces_by_node[n], _zset(args[0])
            commits.append(lambda: trace.insert(delta))
            return trace
        if isinstance(o, op.Delay):
            # z⁻¹(I x): the trace as of the end of the previous step (commits come later)
            return args[0]
        if isinstance(o, op.Join):
            return _join(o, args[0], args[1])
        if isinstance(o, op.DistinctIncremental):
            state = args[0]
            assert isinstance(state, Trace)
            return distinct_delta(state, _zset(args[1]))
        if isinstance(o, op.AggregateIncremental):
            out, commit = self.aggregates[n].step(_zset(args[0]))
            commits.append(commit)
            return out
        if isinstance(o, op.ScopeIncremental):
            scope = self.scopes[n]
            results, commit = scope.step([_zset(a) for a in args])
            self.iterations[n] = scope.last_iterations
            commits.append(commit)
            return results
        if isinstance(o, op.Scope):
            results, count = evaluate_scope(o, [_zset(a) for a in args], what, self.max_iterations)
            self.iterations[n] = count
            return results
        if isinstance(o, op.ScopeOutput):
            assert isinstance(args[0], list)
            return args[0][o.index]
        if isinstance(o, op.Distinct):
            return distinct(_zset(args[0]))
        if isinstance(o, op.Aggregate):
            return aggregate(_zset(args[0]), o.group, o.aggs, o.types, o.is_global)
        raise InternalCompilerError(f"the runtime cannot evaluate {o.kind}")


def _zset(v: Value) -> ZSet:
    if not isinstance(v, ZSet):
        raise InternalCompilerError("an integral was read as a plain stream")
    return v


def _join(o: op.Join, left: Value, right: Value) -> ZSet:
    if isinstance(left, ZSet) and isinstance(right, ZSet):
        return join(left, right, o.left_keys, o.right_keys, o.types)
    if isinstance(left, Trace) and isinstance(right, ZSet):
        return join_with_trace(right, o.right_keys, left, False, o.types)
    if isinstance(left, ZSet) and isinstance(right, Trace):
        return join_with_trace(left, o.left_keys, right, True, o.types)
    raise InternalCompilerError("a join of two integrals would recompute from scratch")

"""One stage of a distributed plan, for one bucket: the driver's operators, this
bucket's rows, this bucket's state.

A `StageExecutor` is an `Executor` of the whole circuit that evaluates only the stage's
nodes, through the same evaluator table and state factories, so nothing is implemented
twice. Inputs from other stages arrive per channel; results leave per channel, split by
the bucket each row goes to. Its state (`traces()`, `meta()`) is checkpointed like the
driver's, one stage and bucket at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dbspc.compiler.circuit import operators as op
from dbspc.runtime.distributed.buckets import split
from dbspc.runtime.distributed.plan import Plan
from dbspc.runtime.executor import Executor
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.registry import Value, as_zset
from dbspc.runtime.zset import ZSet


@dataclass
class StageResult:
    # per channel this stage fills: rows by the bucket they go to
    moved: dict[int, dict[int, ZSet]] = field(default_factory=dict)
    outputs: dict[str, ZSet] = field(default_factory=dict)  # this bucket's share of each view's delta
    commits: list[Callable[[], None]] = field(default_factory=list)


class StageExecutor(Executor):
    def __init__(
        self,
        plan: Plan,
        stage: int,
        bucket: int,
        buckets: int,
        names: dict[int, str] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
    ) -> None:
        super().__init__(plan.circuit, names, max_iterations)
        self.plan = plan
        self.stage = plan.stages[stage - 1]
        self.bucket = bucket
        self.buckets = buckets
        # a node whose rows all live in bucket 0 runs there only
        self.order = [n for n in self.stage.nodes if bucket == 0 or not plan.single(n)]
        kept = set(self.order)
        self.states = {n: s for n, s in self.states.items() if n in kept}

    def run(self, inputs: Mapping[int, ZSet]) -> StageResult:
        """Evaluate the stage on this bucket's input channels. State changes are returned
        as commits, run by the caller once the whole distributed step succeeded."""
        circuit, stage = self.circuit, self.stage
        values: dict[int, Value] = {}
        result = StageResult()
        for n in self.order:
            o = circuit[n]
            args: list[Value] = []
            for port, src in enumerate(o.inputs):
                ch = stage.inputs.get((n, port))
                if ch is not None:
                    args.append(inputs.get(ch) or ZSet.empty(circuit[src].types))
                else:
                    args.append(values[src] if src in values else ZSet.empty(circuit[src].types))
            values[n] = self.evaluate(n, args, result.commits, {})
            if isinstance(o, op.Output):
                result.outputs[o.name] = as_zset(values[n]).consolidate()
        for ch in stage.outputs:
            channel = self.plan.channels[ch]
            value = values.get(channel.node)
            if value is not None:
                result.moved[ch] = split(as_zset(value), channel.to, self.bucket, self.buckets)
        return result

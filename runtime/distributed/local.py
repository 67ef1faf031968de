"""The distributed plan run in one process: every stage, for every bucket, in turn.

It moves rows between stages as the Spark runner does, with the same bucketing, so
tests can check that a circuit split into stages and buckets gives exactly the driver's
deltas; Spark only adds the transport (runtime/distributed/spark_stages.py).
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.runtime.distributed.buckets import split
from dbspc.runtime.distributed.plan import plan
from dbspc.runtime.distributed.stage import StageExecutor
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.zset import ZSet


class BucketedExecutor:
    def __init__(
        self,
        circuit: Circuit,
        buckets: int,
        names: dict[int, str] | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
    ) -> None:
        self.plan = plan(circuit)
        self.buckets = buckets
        self.executors = {
            (s.index, b): StageExecutor(self.plan, s.index, b, buckets, names, max_iterations)
            for s in self.plan.stages
            for b in range(buckets)
        }

    def step(self, sources: dict[str, ZSet]) -> dict[str, ZSet]:
        """One step over all buckets; atomic like Executor.step."""
        circuit = self.plan.circuit
        moving: dict[int, dict[int, list[ZSet]]] = {}
        for ch, channel in enumerate(self.plan.channels):
            o = circuit[channel.node]
            if isinstance(o, op.Source) and o.name in sources:
                for b, z in split(sources[o.name], channel.to, 0, self.buckets).items():
                    moving.setdefault(ch, {}).setdefault(b, []).append(z)
        commits = []
        outputs: dict[str, list[ZSet]] = {}
        for stage in self.plan.stages:
            for b in range(self.buckets):
                here = {
                    ch: ZSet.concat(parts, circuit[self.plan.channels[ch].node].types)
                    for ch, by_bucket in moving.items()
                    if (parts := by_bucket.get(b))
                }
                result = self.executors[(stage.index, b)].run(here)
                commits.extend(result.commits)
                for ch, by_bucket in result.moved.items():
                    for target, z in by_bucket.items():
                        moving.setdefault(ch, {}).setdefault(target, []).append(z)
                for name, z in result.outputs.items():
                    outputs.setdefault(name, []).append(z)
        for commit in commits:
            commit()
        live = circuit.live()
        return {
            name: ZSet.concat(outputs.get(name, []), circuit[n].types).consolidate()
            for name, n in circuit.outputs().items()
            if n in live
        }

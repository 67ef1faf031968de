"""A compiled program plus its running state: the API every front end uses.

    p = Pipeline.from_sql(ddl_and_views, dialect="spark")
    out = p.step({"t": ZSet.from_rows([(1, "x")], p.table_types("t"))})
    out["v"]            # the view's output delta for this step, a consolidated ZSet

A step is atomic: if any table's change or any view's evaluation fails, `step`
raises a `DbspcError` and every table, view and operator state is as it was.
"""

from __future__ import annotations

import hashlib

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import to_text
from dbspc.compiler.compile import Compiled, compile_sql
from dbspc.compiler.deep_stack import deep
from dbspc.compiler.errors import InputError
from dbspc.compiler.frontend.program import Program
from dbspc.compiler.types import SqlType
from dbspc.runtime.executor import Executor
from dbspc.runtime.nested import DEFAULT_MAX_ITERATIONS
from dbspc.runtime.table_checks import checked, table_trace
from dbspc.runtime.trace import Trace, merges_owed, settle_owed
from dbspc.runtime.zset import ZSet

CIRCUIT = "circuit"  # state_meta's key of the circuit digest


class Pipeline:
    def __init__(self, compiled: Compiled, max_iterations: int = DEFAULT_MAX_ITERATIONS) -> None:
        self.program: Program = compiled.program
        self.circuit: Circuit = compiled.circuit
        self.incremental = compiled.circuit.incremental
        self.executor = Executor(self.circuit, _operator_views(self.circuit), max_iterations)
        # The integrated inputs: validate deletes, answer DELETE ... WHERE, and feed the
        # lifted circuit in --non-incremental mode. A table whose rows an operator
        # integrates as they come (a join's integral of it) is held once: its checks read
        # that integral, which the step itself updates.
        shared = self.executor.table_integrals() if self.incremental else {}
        self._shared: dict[str, str] = {}  # table -> its integral's name in executor.traces()
        self.tables: dict[str, Trace] = {}
        for name, t in self.program.tables.items():
            op_name, trace = shared.get(name, ("", None))
            if trace is not None and trace.types == t.types:  # (a source has its table's types)
                self._shared[name] = op_name
                self.tables[name] = trace
            else:
                self.tables[name] = table_trace(t)
        self._previous: dict[str, ZSet] = {}
        self.steps = 0
        self._digest: str | None = None

    @staticmethod
    def from_sql(
        text: str,
        dialect: str = "spark",
        incremental: bool = True,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        base: Program | None = None,
        time_zone: str = "UTC",
    ) -> Pipeline:
        """A pipeline of `text`'s tables and views (read after `base`'s, see compile_sql)."""
        return Pipeline(compile_sql(text, dialect, incremental, base, time_zone), max_iterations)

    # -- schema ----------------------------------------------------------------------------

    def table_types(self, table: str) -> tuple[SqlType, ...]:
        return self.program.tables[table].types

    def table_columns(self, table: str) -> tuple[str, ...]:
        return self.program.tables[table].names

    def view_names(self) -> list[str]:
        return list(self.program.views)

    def view_columns(self, view: str) -> tuple[str, ...]:
        return self.program.views[view].columns

    def view_types(self, view: str) -> tuple[SqlType, ...]:
        return self.program.views[view].plan.types

    def table_contents(self, table: str) -> ZSet:
        return self.tables[table].snapshot()

    # -- checkpoints -----------------------------------------------------------------------

    def state_traces(self) -> dict[str, Trace]:
        """Every piece of state of the pipeline, by stable name: the integrated tables and
        the operators' traces. A checkpoint saves their snapshots; a restore refills a
        fresh Pipeline of the same program, then calls `restored(meta)`."""
        out = {f"table.{name}": t for name, t in self.tables.items()}
        shared = set(self._shared.values())
        out.update({f"op.{k}": t for k, t in self.executor.traces().items() if k not in shared})
        return out

    def state_aliases(self) -> dict[str, str]:
        """Names an older checkpoint may hold a shared table's integral under, each with
        the name it is saved under now (it held such a table twice)."""
        return {f"op.{k}": f"table.{name}" for name, k in self._shared.items()}

    def tables_apart(self) -> dict[str, Trace]:
        """The tables' traces that are not also an operator's state (for state totals)."""
        return {name: t for name, t in self.tables.items() if name not in self._shared}

    def state_meta(self) -> dict[str, object]:
        if not self.incremental:
            raise InputError("only incremental pipelines can be checkpointed")
        return {"steps": self.steps, "executor": self.executor.meta(), CIRCUIT: self.circuit_digest()}

    def circuit_digest(self) -> str:
        """A hash of the compiled circuit, whose operators the state belongs to: another
        version of the compiler may plan the same views differently. Made on first use
        (a checkpoint asks at every refresh; the circuit never changes)."""
        if self._digest is None:
            self._digest = hashlib.sha256(to_text(self.circuit).encode()).hexdigest()[:16]
        return self._digest

    def restored(self, meta: dict[str, object]) -> None:
        self.steps = int(meta["steps"])  # type: ignore[call-overload]
        executor_meta = meta["executor"]
        assert isinstance(executor_meta, dict)
        self.executor.restored(executor_meta)

    # -- stepping --------------------------------------------------------------------------

    def step(self, changes: dict[str, ZSet]) -> dict[str, ZSet]:
        """Apply one batch of changes per table; returns each view's output delta.

        Deeply nested expressions run on a deep stack (compiler/deep_stack.py); a step
        changes no state until it has succeeded, so retrying it there is safe."""
        return deep(lambda: self._step(changes))

    def _step(self, changes: dict[str, ZSet]) -> dict[str, ZSet]:
        settle_owed()  # (the delete checks read the tables)
        checked = {name: self._checked(name, z) for name, z in changes.items()}
        with merges_owed():
            if self.incremental:
                outputs = self.executor.step(checked)
            else:
                outputs = self._step_from_scratch(checked)
            for name, z in checked.items():
                if name not in self._shared:  # (the step has updated a shared one)
                    self.tables[name].insert(z)
        self.steps += 1
        return {name: outputs[name] for name in self.program.views}

    def _step_from_scratch(self, changes: dict[str, ZSet]) -> dict[str, ZSet]:
        """The lifted circuit reads whole tables; D happens here, on its outputs."""
        snapshots = {}
        for name, trace in self.tables.items():
            now = trace.snapshot()
            if name in changes:
                now = ZSet.concat([now, changes[name]], now.types).consolidate()
            snapshots[name] = now
        contents = self.executor.step(snapshots)
        deltas = {}
        for name, now in contents.items():
            before = self._previous.get(name, ZSet.empty(now.types))
            deltas[name] = ZSet.concat([now, before.negate()], now.types).consolidate()
        self._previous = contents
        return deltas

    def _checked(self, table: str, change: ZSet) -> ZSet:
        """Reject a change with the wrong schema or deleting rows that are not there."""
        schema = self.program.tables.get(table)
        if schema is None:
            raise InputError(f"table '{table}' does not exist")
        return checked(schema, self.tables[table], change)


def _operator_views(circuit: Circuit) -> dict[int, str]:
    """For error messages: the first view (in definition order) each operator feeds."""
    names: dict[int, str] = {}
    for name, out in circuit.outputs().items():
        stack = [out]
        while stack:
            n = stack.pop()
            if n in names:
                continue
            names[n] = f"view '{name}'"
            stack.extend(circuit[n].inputs)
    return names


__all__ = ["Pipeline", "op"]

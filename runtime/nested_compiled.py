"""The incremental scope in compiled code, for scopes whose values fit an int64 (§6).

runtime/nested.py evaluates a step of an incremental scope with a few polars and numpy
calls per operator and per iteration, and a recursive view's step runs ~10 iterations:
their fixed cost, not the rows, is most of the step. When every column of the scope is
an integer, a BOOLEAN, a DATE, a TIMESTAMP (held as int64 by their physical value) or a
STRING (held as its code in the scope's dictionary), rows are fixed-width int64 arrays
and the scope runs here instead: each iteration of a nested join, distinct or aggregate
(COUNT, MIN, MAX) is one call into runtime/native/iterscope.h, projections, sums and
negations stay in C++ too, and the rows become a frame only at the scope's edges. The
formulas are the ones of runtime/nested.py, term for term.

Other lifted operators in the body (a Map computing an expression, a Filter) run through
the executor's own table on a frame and come back as integer rows. A step whose rows
hold a NULL is not started here: the scope hands it, and every later step, to
runtime/nested.py (`CompiledScope.step` returns None before it changes anything).

State. Each nested operator keeps its iteration traces twice: the compiled index it
probes, and the scope's `IterationTrace`s, which remain the state of record for
checkpoints, restores, the state report and runtime/nested.py should it take over (their
inserts are batched, see IncrementalScope._insert_pending). The string dictionary only grows:
it holds every string the scope has met, as the traces of a differential dataflow hold
their keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import polars as pl
import pyarrow as pa

from dbspc.compiler.circuit import compiled_loop
from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import body_order
from dbspc.compiler.logical.scalar import Col
from dbspc.compiler.types import SqlType
from dbspc.runtime.int64_columns import int64_column
from dbspc.runtime.native import iterscope
from dbspc.runtime.native.iterscope import Batch
from dbspc.runtime.registry import EVALUATORS, as_zset, evaluate_stateless
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, frame_of, polars_dtype, series_of_numbers

# iterscope.h's aggregate kind of each SQL aggregate the loop computes
_AGG_KINDS = {
    "count_star": iterscope.AGG_COUNT,
    "count": iterscope.AGG_COUNT,
    "min": iterscope.AGG_MIN,
    "max": iterscope.AGG_MAX,
}

# SQL integer types whose int64 codes are the values: decoded by a numpy cast, where
# polars' cast is a query (~0.1 ms) after a copy of the strided column
_NUMPY_INTS = {"TINYINT": np.int8, "SMALLINT": np.int16, "INT": np.int32, "BIGINT": np.int64}


def supports(scope: op.ScopeIncremental) -> bool:
    """Whether the scope runs here: nothing blocks it (compiler/circuit/compiled_loop.py,
    which the incrementality report asks too), and every operator is the scope's
    structure or one of `_HERE`, or a stateless one of the executor's table."""
    return compiled_loop.blocker(scope) is None and all(
        type(o) in _HERE or (type(o) in EVALUATORS and EVALUATORS[type(o)].state is None) for o in scope.body
    )


class Codec:
    """Columns to int64 and back, with the scope's string dictionary: a string's code is
    only ever compared for equality (joins, distinct), and the compiled loop orders
    nothing by value, so codes in order of first sight serve."""

    def __init__(self) -> None:
        self.strings = iterscope.Dictionary()

    def column(self, column: pl.Series, t: SqlType) -> np.ndarray | None:
        """A column's int64 values, or None when it holds a NULL."""
        return None if column.null_count() else int64_column(column, t, self.strings)

    def encode(self, z: ZSet) -> Batch | None:
        """A Z-set as a batch of int64 rows, or None when a value is NULL."""
        n, width = len(z), len(z.types)
        if n == 0:
            return Batch(width)
        rows = np.empty((n, width), dtype=np.int64)
        for j, t in enumerate(z.types):
            values = self.column(z.frame.get_column(col_name(j)), t)
            if values is None:
                return None
            rows[:, j] = values
        weights = np.ascontiguousarray(z.frame.get_column(WEIGHT).to_numpy(), dtype=np.int64)
        return iterscope.batch(rows, weights)

    def series(self, name: str, values: np.ndarray, t: SqlType) -> pl.Series:
        if t.kind == "STRING":
            offsets, data = self.strings.decode(values)
            array = pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))
            return pl.Series(name, array).cast(pl.String)
        plain = _NUMPY_INTS.get(t.kind)
        if plain is not None and (exact := series_of_numbers(name, values.astype(plain))) is not None:
            return exact  # one strided pass; the codes came from this type, so they fit
        column = pl.Series(name, values)
        dtype = polars_dtype(t)
        # (a cast, even to the same type, is a polars query: ~0.1 ms)
        return column if dtype == pl.Int64 else column.cast(dtype)

    def frame(self, rows: np.ndarray, types: tuple[SqlType, ...], *tail: pl.Series) -> pl.DataFrame:
        """The frame of int64 `rows` in their SQL types, then the `tail` columns."""
        return frame_of([*(self.series(col_name(j), rows[:, j], t) for j, t in enumerate(types)), *tail])

    def decode(self, b: Batch, types: tuple[SqlType, ...], consolidated: bool = False) -> ZSet:
        rows, weights = iterscope.arrays(b)
        return ZSet(self.frame(rows, types, pl.Series(WEIGHT, weights)), types, consolidated)

    def tagged(
        self, types: tuple[SqlType, ...], rows: np.ndarray, iterations: np.ndarray, weights: np.ndarray
    ) -> pl.DataFrame:
        """An iteration trace's frame: the rows, their iteration column, their weights."""
        it = pl.Series(col_name(len(types)), iterations, dtype=pl.Int32)
        return self.frame(rows, types, it, pl.Series(WEIGHT, weights))


Kernel = iterscope.Join | iterscope.Distinct | iterscope.Aggregate
# An iteration trace's frame of int64 rows, their iterations and weights (Codec.tagged).
Decode = Callable[[np.ndarray, np.ndarray, np.ndarray], pl.DataFrame]
# Where a commit hands each nested operator input's step, (operator, input, its rows, their
# iterations and weights, and their Decode), to the scope's IterationTraces.
Record = Callable[[int, int, np.ndarray, np.ndarray, np.ndarray, Decode], None]


class CompiledScope:
    """The compiled loop of one `ScopeIncremental`, with its nested operators' indexes."""

    def __init__(self, scope: op.ScopeIncremental, what: str) -> None:
        self.scope = scope
        self.what = what
        self.widths = [len(o.types) for o in scope.body]
        self.fed = sorted({o.inputs[0] for o in scope.body if isinstance(o, op.Delay)})
        self.read_by_loop = set(self.fed) | set(scope.results)
        # a Map of columns only is a projection of the int64 rows
        self.projections = {
            n: [e.index for e in o.exprs if isinstance(e, Col)]
            for n, o in enumerate(scope.body)
            if isinstance(o, op.Map) and all(isinstance(e, Col) for e in o.exprs)
        }
        # each node in evaluation order, how the loop evaluates it, and whether the loop
        # consolidates its value (a value the loop reads: fed back, or a result)
        self.plan: list[tuple[int, _Here, bool]] = []
        for n in body_order(scope.body):
            o = scope.body[n]
            here = _HERE.get(type(o))
            if here is None or (type(o) is op.Map and n not in self.projections):
                here = _THROUGH_FRAMES
            self.plan.append((n, here, n in self.read_by_loop and not here.consolidated))
        self.joins: dict[int, iterscope.Join] = {}
        self.distincts: dict[int, iterscope.Distinct] = {}
        self.aggregates: dict[int, iterscope.Aggregate] = {}
        self.kernels: dict[int, Kernel] = {}
        self._fresh_kernels()

    def _fresh_kernels(self) -> None:
        body, widths = self.scope.body, self.widths
        self.joins = {
            n: iterscope.Join(widths[o.inputs[0]], widths[o.inputs[1]], list(o.left_keys), list(o.right_keys))
            for n, o in enumerate(body)
            if isinstance(o, op.JoinNested)
        }
        self.distincts = {
            n: iterscope.Distinct(widths[n]) for n, o in enumerate(body) if isinstance(o, op.DistinctNested)
        }
        self.aggregates = {
            n: iterscope.Aggregate(
                widths[o.inputs[0]],
                list(o.group),
                [_AGG_KINDS[a.fn] for a in o.aggs],
                [-1 if a.arg is None else a.arg for a in o.aggs],
                widths[n],
            )
            for n, o in enumerate(body)
            if isinstance(o, op.AggregateNested)
        }
        self.kernels = {**self.joins, **self.distincts, **self.aggregates}
        self.codec = Codec()  # the indexes hold its codes
        # per operator, how the iteration traces decode the rows a commit hands them
        self.decoders: dict[int, Decode] = {
            n: partial(self.codec.tagged, o.types) for n, o in enumerate(self.scope.body)
        }

    def load(self, snapshots: dict[tuple[int, int], ZSet]) -> bool:
        """Fill the indexes from the iteration traces' rows (after a restore), or False
        when a stored value cannot be held here."""
        self._fresh_kernels()
        for (n, side), z in snapshots.items():
            width = len(z.types) - 1  # the iteration is the last column
            tagged = self.codec.encode(z)
            if tagged is None:
                return False
            rows, weights = iterscope.arrays(tagged)
            self.kernels[n].load(
                side,
                np.ascontiguousarray(rows[:, :width]),
                np.ascontiguousarray(rows[:, width], dtype=np.int32),
                weights,
            )
        return True

    def step(
        self, inputs: list[ZSet], deepest: int, limit: int, diverged: Callable[[], Exception]
    ) -> tuple[list[ZSet], Callable[[Record], None], int] | None:
        """One outer step: (results, commit, iterations), or None when a value is NULL
        (nothing changed; runtime/nested.py takes the step).

        The loop and its end are IncrementalScope.step's: until every fed-back value is
        zero and no stored iteration after this one can meet this step's changes."""
        for k in self.kernels.values():
            k.begin()  # a step that raised leaves its running sums behind
        encoded = [self.codec.encode(z) for z in inputs]
        if any(b is None for b in encoded):
            return None
        body = self.scope.body
        parts: list[list[Batch]] = [[] for _ in self.scope.results]
        previous: dict[int, Batch] = {}
        i = 0
        while True:
            values: dict[int, Batch] = {}
            for n, here, consolidate in self.plan:
                value = here.run(self, n, body[n], i, values, previous, encoded)
                if value is None:
                    for k in self.kernels.values():
                        k.begin()
                    return None
                values[n] = iterscope.consolidated(value) if consolidate else value
            for part, r in zip(parts, self.scope.results, strict=True):
                part.append(values[r])
            if all(len(values[f]) == 0 for f in self.fed) and (
                i >= deepest or not any(k.work_ahead(i) for k in self.kernels.values())
            ):
                break
            i += 1
            if i >= limit:
                for k in self.kernels.values():
                    k.begin()
                raise diverged()
            previous = values
        results = [
            self.codec.decode(iterscope.consolidated(iterscope.concat(p, self.widths[r])), body[r].types, True)
            for p, r in zip(parts, self.scope.results, strict=True)
        ]

        def commit(record: Record) -> None:
            for n, k in self.kernels.items():
                for side, source in enumerate(body[n].inputs):
                    rows, iterations, weights = k.taken(side)
                    if len(weights):
                        record(n, side, rows, iterations, weights, self.decoders[source])
                k.commit()

        return results, commit, i + 1

    def through_frames(self, o: op.Operator, args: list[Batch]) -> Batch | None:
        """A lifted operator of the executor's table, on frames (an expression, a filter);
        None when its output holds a NULL."""
        types = [self.scope.body[s].types for s in o.inputs]
        frames = [self.codec.decode(a, t) for a, t in zip(args, types, strict=True)]
        return self.codec.encode(as_zset(evaluate_stateless(o, list(frames), self.what)))


# An operator's value at iteration i from (scope, node, operator, i, this iteration's
# values, the previous iteration's, the scope's encoded inputs); None: a NULL, the step
# goes back to runtime/nested.py.
_Run = Callable[
    [CompiledScope, int, op.Operator, int, dict[int, Batch], dict[int, Batch], list[Batch | None]], Batch | None
]


@dataclass(frozen=True, slots=True)
class _Here:
    """How the compiled loop evaluates an operator class, and whether its output is
    consolidated already (a nested distinct's and aggregate's hold each row once; the
    others' are consolidated where the loop reads them)."""

    run: _Run
    consolidated: bool = False


def _args(o: op.Operator, values: dict[int, Batch]) -> list[Batch]:
    return [values[s] for s in o.inputs]


def _scope_input(s: CompiledScope, n: int, o: op.Operator, i: int, inputs: list[Batch | None]) -> Batch:
    """δ0: the outer change enters at inner time 0 only."""
    assert isinstance(o, op.ScopeInput)
    b = inputs[o.index] if i == 0 else None
    return b if b is not None else Batch(s.widths[n])


_HERE: dict[type[op.Operator], _Here] = {
    op.ScopeInput: _Here(lambda s, n, o, i, v, prev, inputs: _scope_input(s, n, o, i, inputs)),
    op.Delay: _Here(lambda s, n, o, i, v, prev, inputs: prev.get(o.inputs[0]) or Batch(s.widths[n])),
    op.JoinNested: _Here(lambda s, n, o, i, v, prev, inputs: s.joins[n].step(v[o.inputs[0]], v[o.inputs[1]], i)),
    op.DistinctNested: _Here(lambda s, n, o, i, v, prev, inputs: s.distincts[n].step(v[o.inputs[0]], i), True),
    op.AggregateNested: _Here(lambda s, n, o, i, v, prev, inputs: s.aggregates[n].step(v[o.inputs[0]], i), True),
    op.Map: _Here(lambda s, n, o, i, v, prev, inputs: iterscope.project(v[o.inputs[0]], s.projections[n])),
    op.Plus: _Here(lambda s, n, o, i, v, prev, inputs: iterscope.concat(_args(o, v), s.widths[n])),
    op.Negate: _Here(lambda s, n, o, i, v, prev, inputs: iterscope.negate(v[o.inputs[0]])),
}
# Any other stateless operator (a Map computing an expression, a Filter): through frames.
_THROUGH_FRAMES = _Here(lambda s, n, o, i, v, prev, inputs: s.through_frames(o, _args(o, v)))

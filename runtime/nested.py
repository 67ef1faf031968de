"""Evaluating recursion scopes: the naive fixpoint and the doubly incremental circuit (6.1).

Nested streams are indexed by (t, i): t the outer step, i the inner iteration. The
incremental scope receives Δδx[t][i], the change of the change, and keeps for every
stateful inner operator an *iteration trace*: the sum over earlier outer steps of its
input at each iteration, S[i] = Σ_{t'<t} Δδx[t'][i], stored as rows tagged with i and
indexed by key. With C[i] = Σ_{i'≤i} Δδx[t][i'] the current step's running sum, every
corner of the 2-D integral is a lookup: X[t-1][i] = S[≤i], X[t][i] = S[≤i] + C[i].

Termination (DBSP §6, nested streams): the inner change can be zero for k iterations and
non-zero at k+1, because an earlier outer step stored state at k+1. The loop runs at
least as deep as the deepest iteration stored by any earlier step, and then until every
feedback value is zero.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import body_order, consumers_of
from dbspc.compiler.errors import InternalCompilerError, RuntimeSqlError
from dbspc.compiler.types import INT, SqlType
from dbspc.runtime.kernels.aggregate import aggregate
from dbspc.runtime.kernels.join import drop_null_keys, join, join_pairs
from dbspc.runtime.kernels.linear import plus
from dbspc.runtime.nested_compiled import CompiledScope, Decode
from dbspc.runtime.nested_compiled import supports as supports_compiled
from dbspc.runtime.registry import Context, Setup, Value, as_zset, evaluate_stateless, evaluates
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import (
    WEIGHT,
    ZSet,
    col_name,
    concat_frames,
    frame_of,
    group_rows,
    int64_series,
    pick,
    rows_equal,
    take,
)

ITER = "__iter"
# Spark's convention: a recursive CTE may recurse 100 levels (spark.sql.cteRecursionLevelLimit)
# unless told otherwise, so a diverging view fails in seconds, not after minutes.
DEFAULT_MAX_ITERATIONS = 100


def _add(a: ZSet, b: ZSet) -> ZSet:
    if len(b) == 0:
        return a
    if len(a) == 0:
        return b
    return ZSet.concat([a, b], a.types).consolidate()


def _sum(a: ZSet, b: ZSet) -> ZSet:
    """a + b, not consolidated."""
    if len(b) == 0:
        return a
    if len(a) == 0:
        return b
    return ZSet.concat([a, b], a.types)


def scope_limit(scope: op.Scope | op.ScopeIncremental, run_limit: int) -> int:
    """Iterations a scope may take: its MAX RECURSION LEVEL n lets levels 0..n-1 produce
    rows (Spark 4.1), which with the iteration that finds nothing new is n + 1."""
    return run_limit if scope.max_level is None else scope.max_level + 1


def _diverged(scope: op.Scope | op.ScopeIncremental, limit: int) -> RuntimeSqlError:
    names = ", ".join(repr(n) for n in scope.names)
    if scope.max_level is not None:
        return RuntimeSqlError(
            f"recursive CTE {names} exceeded its MAX RECURSION LEVEL {scope.max_level} "
            "(Spark: RECURSION_LEVEL_LIMIT_EXCEEDED); raise the level in the view's SQL"
        )
    return RuntimeSqlError(
        f"recursive CTE {names} did not converge within {limit} iterations; "
        "if it converges later, raise the limit with `dbspc run --max-iterations N` or "
        "`SparkPipeline(..., max_iterations=N)`, or write MAX RECURSION LEVEL n after the CTE's name"
    )


# -- the lifted scope: naive evaluation from scratch ----------------------------------------


def evaluate_scope(
    scope: op.Scope, inputs: list[ZSet], what: str, max_iterations: int = DEFAULT_MAX_ITERATIONS
) -> tuple[list[ZSet], int]:
    """The Kleene sequence X_i = body(X_{i-1}) from X_{-1} = 0 until X_i = X_{i-1} (§5).

    Returns the results and the number of iterations it took."""
    order = body_order(scope.body)
    previous: dict[int, ZSet] = {}
    max_iterations = scope_limit(scope, max_iterations)
    for iteration in range(max_iterations):
        values: dict[int, ZSet] = {}
        for n in order:
            o = scope.body[n]
            if isinstance(o, op.ScopeInput):
                values[n] = inputs[o.index]
            elif isinstance(o, op.Delay):
                values[n] = previous.get(o.inputs[0]) or ZSet.empty(o.types)
            else:  # the lifted operators, through the executor's own table
                values[n] = as_zset(evaluate_stateless(o, [values[i] for i in o.inputs], what))
        fed = {o.inputs[0] for o in scope.body if isinstance(o, op.Delay)}
        converged = all(
            len(
                ZSet.concat(
                    [values[f], (previous.get(f) or ZSet.empty(values[f].types)).negate()], values[f].types
                ).consolidate()
            )
            == 0
            for f in fed
        )
        previous = values
        if converged:
            return [values[r].consolidate() for r in scope.results], iteration + 1
    raise _diverged(scope, max_iterations)


# -- the incremental scope -------------------------------------------------------------------


# Rows a compiled scope's iteration trace holds back before inserting them in one batch,
# and at least this many steps' worth: each insert has a fixed cost (~0.5 ms) to spread,
# and its rows' cost (~0.1-0.2 us a row) made the p90 of the steps that paid it, so it
# runs beside the next steps (IterationTrace.insert_beside). A scope that records few
# rows a step inserts small batches and one that records many, rarely. One trace inserts
# per step, the one holding most (unless one holds 4x the bound): the batches of several
# traces do not queue up on the one thread.
_PENDING_ROWS = 1 << 14
_PENDING_STEPS = 4


# One thread inserts recorded rows into iteration traces beside the steps: a trace's own
# large merges run on the merger's thread (runtime/trace.py), which an insert may wait on.
_INSERTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbspc-iteration-insert")


class IterationTrace:
    """Σ over earlier outer steps of an operator input, per inner iteration, by key."""

    def __init__(self, types: tuple[SqlType, ...], key: tuple[int, ...]) -> None:
        self.types = types
        self._trace = Trace((*types, INT), key)
        self.depth = -1  # deepest iteration stored
        # Steps recorded by a compiled scope (runtime/nested_compiled.py), which probes its
        # own index: kept as its int64 rows, iterations and weights, and decoded and
        # inserted in one batch when the trace is read or the scope inserts them
        # (IncrementalScope._insert_pending), so a step pays neither a frame nor a trace
        # insert per operator input.
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_rows = 0
        self._decode: Decode | None = None

        # an insert of pending rows under way on the inserter thread (insert_beside)
        self._inserting: Future[None] | None = None

    @property
    def trace(self) -> Trace:
        self._insert_done()
        if self._pending:
            self._trace.insert(self._take_pending())
        return self._trace

    def insert_beside(self) -> None:
        """Insert the pending rows on the inserter thread, beside the steps that follow;
        the next read of `trace` waits for it. Decoding stays here: the codec's string
        dictionary grows with the next step's encodes."""
        self._insert_done()
        if self._pending:
            self._inserting = _INSERTER.submit(self._trace.insert, self._take_pending())

    def _take_pending(self) -> ZSet:
        """The pending rows, decoded as one Z-set; nothing is pending after."""
        assert self._decode is not None
        rows, iterations, weights = (np.concatenate(part) for part in zip(*self._pending, strict=True))
        self._pending, self._pending_rows = [], 0
        return ZSet(self._decode(rows, iterations, weights), (*self.types, INT))

    def _insert_done(self) -> None:
        if self._inserting is not None:
            inserting, self._inserting = self._inserting, None
            inserting.result()

    def add_rows(self, rows: np.ndarray, iterations: np.ndarray, weights: np.ndarray, decode: Decode) -> None:
        """Store one outer step's inputs as a compiled scope gives them: int64 rows, their
        iterations and weights, and how to decode them to a frame of the trace's rows."""
        if self._pending and decode is not self._decode:
            _ = self.trace  # rows of another codec (a scope rebuilt): theirs decodes them
        self.depth = max(self.depth, int(iterations.max()))
        self._pending.append((rows, iterations, weights))
        self._decode = decode
        self._pending_rows += len(weights)

    @property
    def pending(self) -> int:
        """Rows recorded and not inserted yet."""
        return self._pending_rows

    def matching(self, probe: ZSet, probe_keys: tuple[int, ...], first: int, last: int) -> pl.DataFrame:
        """Stored rows (with their iteration column) whose key matches a row of `probe`
        and whose iteration lies in [first, last], not consolidated (a row may come from
        several runs); nothing is looked up when no stored iteration can qualify."""
        if len(probe) == 0 or first > min(last, self.depth) or last < 0:
            return pl.DataFrame()
        # the lookup deduplicates keys; the callers sum equal rows themselves
        found = self.trace.lookup(probe.frame, [col_name(k) for k in probe_keys], consolidated=False)
        return _in_iterations(found, col_name(len(self.types)), first, last)

    def may_match_after(self, probe: ZSet, probe_keys: tuple[int, ...], after: int) -> bool:
        """Whether a stored row of an iteration after `after` may match a row of `probe`
        by key, judged by key hashes: a no is certain; a false yes (two keys sharing a
        hash) costs the loop one iteration that finds nothing."""
        if len(probe) == 0 or after >= self.depth:
            return False
        names = [col_name(k) for k in probe_keys]
        iterations = self.trace.column_where_hashed(probe.frame, names, col_name(len(self.types)))
        return bool((iterations > after).any())

    def summed(self, found: pl.DataFrame, first: int, last: int) -> ZSet:
        """The rows of a `matching` result in iterations [first, last], summed over them."""
        if found.height == 0 or first > last:
            return ZSet.empty(self.types)
        rows = _in_iterations(found, col_name(len(self.types)), first, last)
        return ZSet(pick(rows, [*(col_name(i) for i in range(len(self.types))), WEIGHT]), self.types).consolidate()

    def rows(self, probe: ZSet, probe_keys: tuple[int, ...], first: int, last: int) -> ZSet:
        """Stored rows matching `probe`, summed over iterations [first, last]."""
        return self.summed(self.matching(probe, probe_keys, first, last), first, last)

    def add(self, changes: list[ZSet]) -> None:
        """Store one outer step's inputs, each tagged with its iteration."""
        parts = [(i, z.frame) for i, z in enumerate(changes) if len(z)]
        if not parts:
            return
        self.depth = max(self.depth, parts[-1][0])
        frame = concat_frames([f for _, f in parts]) if len(parts) > 1 else parts[0][1]
        tags = np.repeat(np.array([i for i, _ in parts], dtype=np.int32), [f.height for _, f in parts])
        iteration = pl.Series(col_name(len(self.types)), tags, dtype=pl.Int32)
        columns = frame.get_columns()
        self.trace.insert(ZSet(frame_of([*columns[:-1], iteration, columns[-1]]), (*self.types, INT)))


def _in_iterations(found: pl.DataFrame, column: str, first: int, last: int) -> pl.DataFrame:
    """The rows of `found` whose iteration column lies in [first, last]."""
    if found.height == 0:
        return found
    it = found.get_column(column).to_numpy()
    keep = (it >= first) & (it <= last)
    return found if keep.all() else take(found, np.flatnonzero(keep))


def _stored_join_at(
    run: _Running,
    delta: ZSet,
    keys: tuple[int, ...],
    state: IterationTrace,
    i: int,
    delta_is_left: bool,
    out_types: tuple[SqlType, ...],
) -> ZSet:
    """delta ⋈ the state's rows of iteration i, where delta is a sum over this step's
    iterations so far (kept by `run`). Such a sum changes only in iterations where its
    side changes (often only the first: a table entering the scope by δ0), so its pairs
    with every stored iteration are found once and each iteration takes its own. When
    it keeps changing, the pairs of one iteration are probed each time instead."""
    if len(delta) == 0 or i > state.depth:
        return ZSet.empty(out_types)
    cached = run.probed
    if cached is None or cached[0] is not delta:
        run.probes += 1
        if run.probes > 2:  # changed twice (a sum of the first iteration may be consolidated once)
            return _stored_join(delta, keys, state, i, i, delta_is_left, out_types)
        names = [col_name(k) for k in keys]
        frame = drop_null_keys(delta.frame, names)
        pairs = state.trace.matches(frame, names)
        if pairs is None:
            run.probes = 3
            return _stored_join(delta, keys, state, i, i, delta_is_left, out_types)
        positions, found = pairs
        iteration = found.get_column(col_name(len(state.types))).to_numpy()
        found = pick(found, [*(col_name(c) for c in range(len(state.types))), WEIGHT])
        cached = run.probed = (delta, frame, positions, found, iteration)
    _, frame, positions, found, iteration = cached
    keep = np.flatnonzero(iteration == i)
    if not keep.size:
        return ZSet.empty(out_types)
    if keep.size != len(positions):
        positions, found = positions[keep], take(found, keep)
    return join_pairs(frame, positions, found, delta_is_left, out_types, consolidate=False)


def _stored_join(
    delta: ZSet,
    keys: tuple[int, ...],
    state: IterationTrace,
    first: int,
    last: int,
    delta_is_left: bool,
    out_types: tuple[SqlType, ...],
) -> ZSet:
    """delta ⋈ (the state's rows of iterations [first, last]), unconsolidated: pairs
    straight from the trace's probe (Trace.matches), each stored row with its own
    iteration, so nothing is summed before the join."""
    if len(delta) == 0 or first > min(last, state.depth) or last < 0:
        return ZSet.empty(out_types)
    names = [col_name(k) for k in keys]
    frame = drop_null_keys(delta.frame, names)  # SQL: a NULL key joins nothing
    pairs = state.trace.matches(frame, names)
    if pairs is None:
        stored = state.rows(ZSet(frame, delta.types), keys, first, last)
        left, right = (delta, stored) if delta_is_left else (stored, delta)
        other = state.trace.key
        return join(left, right, keys if delta_is_left else other, other if delta_is_left else keys, out_types)
    positions, found = pairs
    iteration = found.get_column(col_name(len(state.types))).to_numpy()
    keep = (iteration >= first) & (iteration <= last)
    if not keep.all():
        positions, found = positions[keep], take(found, np.flatnonzero(keep))
    found = pick(found, [*(col_name(c) for c in range(len(state.types))), WEIGHT])
    return join_pairs(frame, positions, found, delta_is_left, out_types, consolidate=False)


# Running sums of at least this many rows are consolidated at each iteration.
_CONSOLIDATE_ROWS = 1 << 14

_RunningSums = dict[tuple[int, int], "_Running"]


@dataclass
class _Running:
    """This outer step's inputs of one operator, per iteration, and their running sum."""

    types: tuple[SqlType, ...]
    per_iteration: list[ZSet] = field(default_factory=list)
    total: ZSet | None = None
    # a distinct's rows touched so far in this step, with their weights (None: not
    # started, or given up on a hash collision: the distinct then regroups each iteration)
    touched: _Touched | None = None
    exact: bool = False
    # a join side's running sum before this iteration, probed into the other side's
    # iteration trace at every stored iteration: (that sum, its rows with non-NULL keys,
    # the pairs' probe positions, the stored rows, their iterations)
    probed: tuple[ZSet, pl.DataFrame, np.ndarray, pl.DataFrame, np.ndarray] | None = None
    probes: int = 0  # how often `probed` was filled: past 2, one iteration's pairs are probed each time

    def before(self) -> ZSet:
        return self.total if self.total is not None else ZSet.empty(self.types)

    def push(self, change: ZSet) -> ZSet:
        # Small sums stay unconsolidated (every reader, joins, lookups, the groupings of
        # distinct and the aggregates' corners, sums equal rows itself), which saves a
        # fixed-cost call per iteration; large ones, as in a first load, are consolidated
        # so that the readers do not carry the same row once per iteration.
        self.per_iteration.append(change)
        total = _sum(self.before(), change)
        self.total = total.consolidate() if len(total) >= _CONSOLIDATE_ROWS else total
        return self.total

    def changed(self) -> bool:
        return any(len(z) for z in self.per_iteration)


class _Touched:
    """The rows a nested distinct has seen in this outer step, each once, with what its
    four corners need: the running sum C[≤i] per row and the stored weights S[j] found
    for it, per iteration j. Each iteration groups only its own change and probes the
    iteration trace only for rows not seen before, so an iteration costs O(|Δδx[t][i]|)
    probes instead of regrouping and re-probing the whole running sum every time."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.frame: pl.DataFrame | None = None  # the rows (c0..), each once
        self.sorted_hashes = np.empty(0, dtype=np.uint64)  # the rows' hash_rows, all different, ascending
        self.by_hash = np.empty(0, dtype=np.int64)  # the row of each of those
        self.now = np.empty(0, dtype=np.int64)  # C[≤i] per row
        # every stored row found: the row it equals, its iteration, its weight
        self.s_row = np.empty(0, dtype=np.int64)
        self.s_it = np.empty(0, dtype=np.int64)
        self.s_w = np.empty(0, dtype=np.int64)

    def add(self, d: ZSet, state: IterationTrace) -> np.ndarray | None:
        """Count `d` in; the running sum before it (per row) or None when rows that
        differ share a hash (the caller then takes the exact path)."""
        was = self.now
        if len(d) == 0:
            return was.copy()
        columns = [d.frame.get_column(c) for c in self.names]
        groups = group_rows(columns)
        assert groups.hashes is not None
        sums = groups.sums(d.frame.get_column(WEIGHT).to_numpy())
        # the groups in ascending hash order (group_rows sorts by hash; its exact
        # fallback for colliding rows does not, and is caught here as well)
        reps = groups.reps
        rep_hashes = groups.hashes[reps]
        if len(rep_hashes) > 1 and not bool((rep_hashes[1:] > rep_hashes[:-1]).all()):
            return None
        at = np.full(len(reps), -1, dtype=np.int64)
        if len(self.sorted_hashes):
            pos = np.minimum(np.searchsorted(self.sorted_hashes, rep_hashes), len(self.sorted_hashes) - 1)
            hit = self.sorted_hashes[pos] == rep_hashes
            at[hit] = self.by_hash[pos[hit]]
            if hit.any():
                assert self.frame is not None
                if not rows_equal(self.frame.get_columns(), at[hit], columns, reps[hit]):
                    return None
        new = np.flatnonzero(at < 0)
        if new.size:
            rows = pick(take(d.frame, reps[new]), self.names)
            # the stored rows' iterations and weights are all a distinct needs of them
            pairs = state.trace.matched_columns(
                rows, self.names, [col_name(len(self.names)), WEIGHT], key_hashes=rep_hashes[new]
            )
            if pairs is None:
                return None
            base = len(self.sorted_hashes)
            at[new] = base + np.arange(new.size)
            positions, (it, w) = pairs
            if positions.size:
                self.s_row = np.concatenate([self.s_row, base + positions])
                self.s_it = np.concatenate([self.s_it, it.astype(np.int64, copy=False)])
                self.s_w = np.concatenate([self.s_w, w])
            self.frame = rows if self.frame is None else concat_frames([self.frame, rows])
            # both in ascending hash order: merged by one insertion, not a sort
            into = np.searchsorted(self.sorted_hashes, rep_hashes[new])
            self.sorted_hashes = np.insert(self.sorted_hashes, into, rep_hashes[new])
            self.by_hash = np.insert(self.by_hash, into, at[new])
            was = np.concatenate([was, np.zeros(new.size, dtype=np.int64)])
        self.now = was.copy()
        np.add.at(self.now, at, sums)
        return was

    def stored(self, upto: int) -> np.ndarray:
        """Per row, its stored weight summed over iterations ≤ upto: S[≤upto]."""
        out = np.zeros(len(self.sorted_hashes), dtype=np.int64)
        keep = self.s_it <= upto
        np.add.at(out, self.s_row[keep], self.s_w[keep])
        return out


class IncrementalScope:
    """Runs a `ScopeIncremental` once per outer step; state commits at the end."""

    def __init__(self, scope: op.ScopeIncremental, what: str, max_iterations: int = DEFAULT_MAX_ITERATIONS) -> None:
        self.scope = scope
        self.what = what
        self.max_iterations = scope_limit(scope, max_iterations)
        self.order = body_order(scope.body)
        self.states: dict[tuple[int, int], IterationTrace] = {}
        for n, o in enumerate(scope.body):
            # the index of each input's iteration trace: what the operator probes it by
            spec = _NESTED.get(type(o))
            for side, key in enumerate(spec.keys(o) if spec else ()):
                types = scope.body[o.inputs[side]].types
                self.states[(n, side)] = IterationTrace(types, tuple(range(len(types))) if key is None else key)
        self.last_iterations = 0
        # the loop in compiled code when every value fits an int64 (runtime/nested_compiled.py)
        self.compiled = CompiledScope(scope, what) if supports_compiled(scope) else None
        # outputs read as Z-sets by the loop itself (fed back, whose emptiness ends it, or
        # results): the others' readers consolidate what they need themselves
        self.read_by_loop = {o.inputs[0] for o in scope.body if isinstance(o, op.Delay)} | set(scope.results)
        # unions whose every reader sums equal rows itself: left unconsolidated (a UNION's
        # Plus before the recursion's distinct, say), one grouping fewer per iteration
        readers = consumers_of(scope.body)
        self.plain_sums = {
            n
            for n, o in enumerate(scope.body)
            if isinstance(o, op.Plus)
            and n not in self.read_by_loop
            and all(isinstance(scope.body[r], _SUMS_EQUAL_ROWS) for r in readers[n])
        }

    def traces(self) -> dict[str, Trace]:
        """Every iteration trace, by a stable name (for checkpoints)."""
        return {f"{n}.{side}": s.trace for (n, side), s in self.states.items()}

    def meta(self) -> None:
        return None

    def restored(self, meta: object = None) -> None:
        """Recompute the stored depth after traces were refilled from a checkpoint, and
        the compiled loop's indexes from the same snapshots."""
        snapshots = {key: s.trace.snapshot() for key, s in self.states.items()}
        for key, s in self.states.items():
            frame = snapshots[key].frame
            it = col_name(len(s.types))
            s.depth = int(frame[it].max()) if frame.height else -1  # type: ignore[arg-type]
        if self.compiled is not None and not self.compiled.load(snapshots):
            self.compiled = None

    def depth(self) -> int:
        return max((s.depth for s in self.states.values()), default=-1)

    def state_rows(self) -> int:
        return sum(len(s.trace) for s in self.states.values())

    def state_bytes(self) -> int:
        # the compiled loop's indexes hold the same rows again, as int64
        held = sum(k.nbytes() for k in self.compiled.kernels.values()) if self.compiled is not None else 0
        return sum(s.trace.nbytes() for s in self.states.values()) + held

    def step(self, inputs: list[ZSet]) -> tuple[list[ZSet], Callable[[], None]]:
        if self.compiled is not None:
            done = self.compiled.step(
                inputs, self.depth(), self.max_iterations, lambda: _diverged(self.scope, self.max_iterations)
            )
            if done is not None:
                sums, record, self.last_iterations = done

                def recorded() -> None:
                    before = self._pending_rows()
                    record(self._record)
                    self._insert_pending(self._pending_rows() - before)

                return sums, recorded
            self.compiled = None  # a NULL: this step and every later one run below
        running: dict[tuple[int, int], _Running] = {k: _Running(s.types) for k, s in self.states.items()}
        fed = sorted({o.inputs[0] for o in self.scope.body if isinstance(o, op.Delay)})
        parts: list[list[ZSet]] = [[] for _ in self.scope.results]
        previous: dict[int, ZSet] = {}
        deepest = self.depth()
        i = 0
        while True:
            values: dict[int, ZSet] = {}
            for n in self.order:
                values[n] = self._evaluate(n, i, values, previous, inputs, running)
            for part, r in zip(parts, self.scope.results, strict=True):
                part.append(values[r])
            if all(len(values[f]) == 0 for f in fed) and (i >= deepest or not self._work_ahead(i, running)):
                break
            i += 1
            if i >= self.max_iterations:
                raise _diverged(self.scope, self.max_iterations)
            previous = values
        self.last_iterations = i + 1
        types = [self.scope.body[r].types for r in self.scope.results]
        sums = [ZSet.concat(p, t).consolidate() for p, t in zip(parts, types, strict=True)]

        def commit() -> None:
            for key, r in running.items():
                self.states[key].add(r.per_iteration)

        return sums, commit

    def _record(
        self, n: int, side: int, rows: np.ndarray, iterations: np.ndarray, weights: np.ndarray, decode: Decode
    ) -> None:
        self.states[(n, side)].add_rows(rows, iterations, weights, decode)

    def _pending_rows(self) -> int:
        return sum(s.pending for s in self.states.values())

    def _insert_pending(self, step_rows: int) -> None:
        """Insert the recorded rows of the trace holding most, once it holds the larger of
        _PENDING_ROWS and _PENDING_STEPS times this step's `step_rows`, and of any
        holding 4x that."""
        if not self.states:  # a scope of linear operators only keeps nothing
            return
        bound = max(_PENDING_ROWS, _PENDING_STEPS * step_rows)
        largest = max(self.states.values(), key=lambda s: s.pending)
        for s in self.states.values():
            if (s is largest and s.pending >= bound) or s.pending >= 4 * bound:
                s.insert_beside()

    def _work_ahead(self, i: int, running: _RunningSums) -> bool:
        """Whether state stored after iteration i can still meet this step's changes.

        With every feedback value zero, later iterations are non-zero only where a stored
        iteration trace holds rows, at an iteration > i, for a key this step touched: the
        join's S_a[=j] meets C_b, S_b[=j] meets C_a, and distinct and aggregates meet their
        own running sums. If none does, the loop may stop before the stored depth."""
        for (n, side), state in self.states.items():
            if state.depth <= i:
                continue
            # a join's stored side meets the other side's changes; the rest meet their own
            probe_side = 1 - side if _NESTED[type(self.scope.body[n])].bilinear else side
            probe = running[(n, probe_side)].before()
            if state.may_match_after(probe, self.states[(n, probe_side)].trace.key, i):
                return True
        return False

    def _evaluate(
        self,
        n: int,
        i: int,
        values: dict[int, ZSet],
        previous: dict[int, ZSet],
        inputs: list[ZSet],
        running: _RunningSums,
    ) -> ZSet:
        o = self.scope.body[n]
        if isinstance(o, op.ScopeInput):
            # δ0: the outer change enters at inner time 0 only
            return inputs[o.index] if i == 0 else ZSet.empty(o.types)
        if isinstance(o, op.Delay):
            return previous.get(o.inputs[0]) or ZSet.empty(o.types)
        args = [values[s] for s in o.inputs]
        if n in self.plain_sums:
            return ZSet.concat([as_zset(a) for a in args], o.types)
        nested = _NESTED.get(type(o))
        if nested is not None:
            return nested.evaluate(self, n, o, i, [as_zset(a) for a in args], running)
        return as_zset(evaluate_stateless(o, list(args), self.what))

    def _join(self, n: int, o: op.JoinNested, i: int, args: list[ZSet], running: _RunningSums) -> ZSet:
        """The four terms, with S = stored iteration traces and C = this step's sums:
        a⋈(S_b[≤i] + C_b[<i] + b) + S_a[=i]⋈(C_b[<i] + b) + C_a[<i]⋈(S_b[=i] + b) + S_a[<i]⋈b."""
        a, b = args
        sa, sb = self.states[(n, 0)], self.states[(n, 1)]
        ra, rb = running[(n, 0)], running[(n, 1)]
        ca, cb = ra.before(), rb.before()
        lk, rk = o.left_keys, o.right_keys
        # joins are bilinear, so their inputs need not be consolidated: plain sums will
        # do, and a term with a stored side is split into its stored and current parts
        cb_b = _sum(cb, b)
        terms = [
            _stored_join(a, lk, sb, 0, i, True, o.types),
            join(a, cb_b, lk, rk, o.types, consolidate=False),
            _stored_join_at(rb, cb_b, rk, sa, i, False, o.types),
            _stored_join_at(ra, ca, lk, sb, i, True, o.types),
            join(ca, b, lk, rk, o.types, consolidate=False),
            _stored_join(b, rk, sa, 0, i - 1, False, o.types),
        ]
        ra.push(a)
        rb.push(b)
        # bilinear, so the sum of the terms is the join; a consolidation here would be
        # done again by the consumer that needs it (a union, a distinct)
        return plus(terms, o.types) if n in self.read_by_loop else ZSet.concat(terms, o.types)

    def _corners(self, n: int, i: int, d: ZSet, run: _Running, key: tuple[int, ...]) -> list[tuple[ZSet, int]]:
        """The input's value at the four corners (t,i), (t-1,i), (t,i-1), (t-1,i-1),
        restricted to the keys changed in this outer step, with their signs."""
        before = run.before()
        after = run.push(d)
        touched = ZSet.concat([before, after], d.types)
        if len(touched) == 0:
            return []
        state = self.states[(n, 0)]
        found = state.matching(touched, key, 0, i)  # one lookup serves both corners
        s_i, s_prev = state.summed(found, 0, i), state.summed(found, 0, i - 1)
        # `before` and `after` hold only touched rows, so every corner is restricted alike
        return [(_add(s_i, after), 1), (s_i, -1), (_add(s_prev, before), -1), (s_prev, 1)]

    def _distinct(self, n: int, o: op.DistinctNested, i: int, args: list[ZSet], running: _RunningSums) -> ZSet:
        """distinct(X[t][i]) − distinct(X[t-1][i]) − distinct(X[t][i-1]) + distinct(X[t-1][i-1]),
        for the rows changed in this outer step, computed from each row's four weights
        in one grouping rather than as four Z-sets."""
        (d,), run = args, running[(n, 0)]
        state = self.states[(n, 0)]
        if not run.exact:
            if run.touched is None:
                run.touched = _Touched([col_name(k) for k in range(len(d.types))])
            was = run.touched.add(d, state)
            if was is not None:
                run.push(d)
                return self._distinct_touched(run.touched, was, i, d.types)
            run.exact = True  # a hash collision: group exactly from here on
        before = run.before()
        after = run.push(d)
        if len(before) == 0 and len(after) == 0:
            return ZSet.empty(d.types)
        touched = _sum(before, after)
        found = state.matching(touched, tuple(range(len(d.types))), 0, i)
        cols = [col_name(k) for k in range(len(d.types))]
        frames = [after.frame, before.frame, *([found] if found.height else [])]
        data = concat_frames([pick(f, cols) for f in frames])
        groups = group_rows(data.get_columns())
        # per row of `data`: its weight now, was, in S[≤i] and in S[<i]
        weights = np.zeros((4, data.height), dtype=np.int64)
        start = 0
        for row, f in enumerate(frames):
            w = f.get_column(WEIGHT).to_numpy()
            weights[row, start : start + len(w)] = w
            if row == 2:
                it = f.get_column(col_name(len(d.types))).to_numpy()
                weights[3, start : start + len(w)] = np.where(it < i, w, 0)
            start += len(w)
        now, was, s_i, s_prev = groups.sums(weights)
        out = (s_i + now > 0).astype(np.int64) - (s_i > 0) - (s_prev + was > 0) + (s_prev > 0)
        keep = out != 0
        frame = take(data, groups.reps[keep]).hstack([int64_series(WEIGHT, out[keep])])
        return ZSet.from_frame(frame, d.types)

    @staticmethod
    def _distinct_touched(t: _Touched, was: np.ndarray, i: int, types: tuple[SqlType, ...]) -> ZSet:
        """The same formula over the touched rows' weights, kept across iterations."""
        if t.frame is None:
            return ZSet.empty(types)
        now, s_i, s_prev = t.now, t.stored(i), t.stored(i - 1)
        out = (s_i + now > 0).astype(np.int64) - (s_i > 0) - (s_prev + was > 0) + (s_prev > 0)
        keep = np.flatnonzero(out)
        if not keep.size:
            return ZSet.empty(types)
        frame = take(t.frame, keep).hstack([int64_series(WEIGHT, out[keep])])
        return ZSet.from_frame(frame, types)

    def _aggregate(self, n: int, o: op.AggregateNested, i: int, args: list[ZSet], running: _RunningSums) -> ZSet:
        """The same four corners, aggregated per changed group."""
        (d,), run = args, running[(n, 0)]
        parts = [
            aggregate(x, o.group, o.aggs, o.types, o.is_global).scale(sign)
            for x, sign in self._corners(n, i, d, run, o.group)
        ]
        return plus(parts, o.types) if parts else ZSet.empty(o.types)


@dataclass(frozen=True, slots=True)
class _NestedOperator:
    """How the incremental scope evaluates a doubly incremental operator (§6)."""

    evaluate: Callable[[IncrementalScope, int, Any, int, list[ZSet], _RunningSums], ZSet]
    # the key of each input's iteration trace (None: the whole row)
    keys: Callable[[Any], list[tuple[int, ...] | None]]
    # a join's stored side meets the other side's changes (Thm 3.4 per iteration)
    bilinear: bool = False


_NESTED: dict[type[op.Operator], _NestedOperator] = {
    op.JoinNested: _NestedOperator(IncrementalScope._join, lambda o: [o.left_keys, o.right_keys], bilinear=True),
    op.DistinctNested: _NestedOperator(IncrementalScope._distinct, lambda o: [None]),
    op.AggregateNested: _NestedOperator(IncrementalScope._aggregate, lambda o: [o.group]),
}


# Readers that take an unconsolidated Z-set as it is: the nested operators group or
# join their input themselves, and the linear ones map it row by row (DBSP Thm 3.3).
_SUMS_EQUAL_ROWS = (op.DistinctNested, op.AggregateNested, op.JoinNested, op.Map, op.Filter, op.Plus, op.Negate)

# Scope-only operators that the scopes evaluate themselves: δ0 at inner time 0.
SCOPE_STRUCTURE: tuple[type[op.Operator], ...] = (op.ScopeInput,)


def nested_evaluator(cls: type[op.Operator]) -> object | None:
    """How an incremental scope evaluates a scope-only operator class (None if it cannot)."""
    return _NESTED.get(cls) or (cls if cls in SCOPE_STRUCTURE else None)


# -- evaluators ---------------------------------------------------------------------------


@evaluates(op.Scope)
def _scope(ctx: Context, o: op.Scope, args: list[Value]) -> Value:
    results, count = evaluate_scope(o, [as_zset(a) for a in args], ctx.what, ctx.max_iterations)
    ctx.iterations[ctx.node] = count
    return results


def _scope_state(setup: Setup) -> IncrementalScope:
    o = setup.circuit[setup.node]
    assert isinstance(o, op.ScopeIncremental)
    return IncrementalScope(o, setup.what, setup.max_iterations)


@evaluates(op.ScopeIncremental, state=_scope_state, state_name="scope")
def _scope_incremental(ctx: Context, o: op.ScopeIncremental, args: list[Value]) -> Value:
    results, commit = ctx.state.step([as_zset(a) for a in args])
    ctx.iterations[ctx.node] = ctx.state.last_iterations
    ctx.commits.append(commit)
    return results


@evaluates(op.ScopeOutput)
def _scope_output(ctx: Context, o: op.ScopeOutput, args: list[Value]) -> Value:
    """The ∫ at a scope's exit: result `index` of the scope's tuple of results."""
    results = args[0]
    if not isinstance(results, list):
        raise InternalCompilerError("scope_output reads a scope")
    return results[o.index]

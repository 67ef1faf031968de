"""Splits a compiled incremental circuit into stages that run once per bucket (issue 12).

Distributed, every stream is a Z-set spread over B buckets; the sum of its buckets is
the stream. Linear operators are correct on any spread (Q(Σ_b x_b) = Σ_b Q(x_b), Thm
3.3), but an operator that keeps state or pairs rows must see all rows of a key in one
bucket: a join both sides of a key, an aggregate a group, distinct a row. So each
stream has a *partitioning*:

- ``hash(K)``: a row is in bucket hash(values of columns K) mod B;
- ``single``: every row is in bucket 0 (a global aggregate, a recursion scope);
- ``any``: spread with no rule (the sum of differently keyed streams).

Each operator declares, through the table below, which partitioning it needs of each
input and which its output has. Where an input's partitioning does not meet the need,
the edge gets an *exchange*: its rows are moved to the buckets the need names (Spark's
shuffle, distributed). Exchanges cut the circuit into *stages*: a stage runs, for each
bucket, the same operators as the driver would, on that bucket's rows, through the
runtime's one evaluator table (no operator is implemented twice). A trace (an integral
read through z⁻¹) never crosses a stage: it stays where it is kept.

A node whose output is ``single`` runs in bucket 0 only; elsewhere its value is empty
(a constant, or a recursion's seed, must not be counted once per bucket).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import head, numbering
from dbspc.compiler.errors import UsageError
from dbspc.compiler.logical.scalar import Col


@dataclass(frozen=True, slots=True, order=True)
class Part:
    """How a stream's rows are spread over buckets (see the module's docstring)."""

    kind: str  # "hash", "single" or "any"
    cols: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.kind == "hash":
            return "hash(" + ", ".join(f"#{c}" for c in self.cols) + ")"
        return self.kind


SINGLE = Part("single")
ANY = Part("any")


def hashed(cols: Sequence[int]) -> Part:
    """By the columns' values; no columns means one bucket."""
    return Part("hash", tuple(cols)) if cols else SINGLE


def whole_row(width: int) -> Part:
    return hashed(range(width))


@dataclass(frozen=True, slots=True)
class Need:
    """What an operator needs of its inputs and what its output then is.

    `ports[i]` is the partitioning input i must have (None: any will do). `together`
    names inputs that must be partitioned alike, position for position (a join's two
    sides); `exact` that a subset of the columns is not enough (an integral indexed by
    its key serves a consumer that probes exactly that key)."""

    ports: tuple[Part | None, ...]
    out: Part
    together: bool = False
    exact: bool = False


# An operator's rule: (the operator, its inputs' partitionings) -> its need.
Rule = Callable[[op.Operator, list[Part]], Need]
RULES: dict[type[op.Operator], Rule] = {}


def rule(*classes: type[op.Operator]) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for cls in classes:
            RULES[cls] = fn
        return fn

    return register


@rule(op.Source)
def _source(o: op.Operator, parts: list[Part]) -> Need:
    # Rows arrive as read from storage; every edge leaving a source is an exchange.
    return Need((), ANY)


@rule(op.Constant)
def _constant(o: op.Operator, parts: list[Part]) -> Need:
    return Need((), SINGLE)


@rule(op.Filter, op.Negate, op.Delay, op.Differentiate, op.Delta0, op.ScopeOutput)
def _same(o: op.Operator, parts: list[Part]) -> Need:
    return Need((None,), parts[0])


@rule(op.Plus)
def _plus(o: op.Operator, parts: list[Part]) -> Need:
    same = all(p == parts[0] for p in parts)
    return Need(tuple(None for _ in parts), parts[0] if same else ANY)


@rule(op.Map)
def _map(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.Map)
    p = parts[0]
    if p.kind != "hash":
        return Need((None,), p)
    where = {e.index: i for i, e in reversed(list(enumerate(o.exprs))) if isinstance(e, Col)}
    if all(c in where for c in p.cols):
        return Need((None,), Part("hash", tuple(where[c] for c in p.cols)))
    return Need((None,), ANY)


@rule(op.Integrate)
def _integrate(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.Integrate)
    want = hashed(o.key)
    return Need((want,), parts[0], exact=True)


@rule(op.Join)
def _join(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.Join)
    left, right = hashed(o.left_keys), hashed(o.right_keys)
    return Need((left, right), parts[0], together=True)


@rule(op.DistinctIncremental, op.PositivePartIncremental)
def _pointwise(o: op.Operator, parts: list[Part]) -> Need:
    # inputs (z⁻¹(I d), d): the delta goes where the integral of its rows is kept
    want = whole_row(len(o.types))
    return Need((want, want), parts[1], together=True)


@rule(op.AggregateIncremental)
def _aggregate(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.AggregateIncremental)
    # the output's first columns are the group's, so rows stay where their group was
    have = parts[0]
    if have.kind == "hash" and set(have.cols) <= set(o.group):
        return Need((hashed(o.group),), Part("hash", tuple(o.group.index(c) for c in have.cols)))
    return Need((hashed(o.group),), have if have == SINGLE else hashed(range(len(o.group))))


@rule(op.WindowIncremental)
def _window(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.WindowIncremental)
    want = hashed(o.partition)
    return Need((want, want), parts[1], together=True)


@rule(op.TopKIncremental)
def _topk(o: op.Operator, parts: list[Part]) -> Need:
    assert isinstance(o, op.TopKIncremental)
    want = hashed(o.partition)
    return Need((want,), parts[0] if meets(parts[0], want, False) else want)


@rule(op.ScopeIncremental)
def _scope(o: op.Operator, parts: list[Part]) -> Need:
    # A fixpoint's iterations join rows of any key with any other: one bucket holds it.
    return Need(tuple(SINGLE for _ in parts), SINGLE)


@rule(op.Output)
def _output(o: op.Operator, parts: list[Part]) -> Need:
    # Equal rows in one bucket, so each bucket's delta is consolidated on its own.
    if parts[0] == ANY:
        return Need((whole_row(len(o.types)),), whole_row(len(o.types)))
    return Need((None,), parts[0])


def meets(have: Part, want: Part, exact: bool) -> bool:
    """Whether rows spread by `have` are already where `want` needs them, for a unary need."""
    if have == want or have == SINGLE:
        return True
    if exact or have.kind != "hash" or want.kind != "hash":
        return False
    return set(have.cols) <= set(want.cols)  # equal keys agree on any subset of their columns


@dataclass(frozen=True, slots=True)
class Channel:
    """Rows of `node` moved between stages: re-bucketed `to` a partitioning, or kept in
    the bucket that made them (`to` is None)."""

    node: int
    to: Part | None


@dataclass
class Stage:
    index: int
    nodes: list[int]  # topological order
    # per node of the stage and input port fed from another stage: the channel
    inputs: dict[tuple[int, int], int] = field(default_factory=dict)
    outputs: list[int] = field(default_factory=list)  # channels this stage fills


@dataclass(frozen=True, slots=True)
class Check:
    """Where a table's change is checked against the table (table_stage.py): in stage
    `stage` (0: a stage of its own), with the table's share spread by `share`."""

    stage: int
    share: Part
    routes: tuple[tuple[int, Part], ...]  # the channels reading the table, and their moves


@dataclass
class Plan:
    circuit: Circuit
    part: dict[int, Part]  # each live node's output partitioning
    stages: list[Stage]
    channels: list[Channel]
    checks: dict[str, Check] = field(default_factory=dict)  # per table the circuit reads

    def single(self, node: int) -> bool:
        """Runs in bucket 0 only."""
        return self.part[node] == SINGLE

    def checked_in(self, stage: int) -> list[str]:
        """The tables whose changes stage `stage` checks, by name."""
        return sorted(t for t, c in self.checks.items() if c.stage == stage)

    def dump(self) -> str:
        """Deterministic text for review: each stage's nodes, partitionings and exchanges."""
        num = numbering(self.circuit)
        lines = [f"-- distributed plan: {len(self.stages)} stage(s), {len(self.channels)} channel(s)"]
        for i, ch in enumerate(self.channels):
            to = "kept in its bucket" if ch.to is None else f"moved by {ch.to}"
            lines.append(f"ch{i} = %{num[ch.node]} {to}")
        def checks(stage: int) -> None:
            for table in self.checked_in(stage):
                c = self.checks[table]
                to = ", ".join(f"ch{ch}" for ch, _ in c.routes)
                lines.append(f"  check {table} against its share by {c.share} -> {to}")

        if self.checked_in(0):
            lines.append("stage 0 (the changes of tables read by differing keys, checked by the whole row):")
            checks(0)
        for stage in self.stages:
            lines.append(f"stage {stage.index}:")
            checks(stage.index)
            for n in stage.nodes:
                o = self.circuit[n]
                args = ", ".join(
                    f"ch{stage.inputs[(n, p)]}" if (n, p) in stage.inputs else f"%{num[s]}"
                    for p, s in enumerate(o.inputs)
                )
                lines.append(f"  %{num[n]} = {head(o)}({args}) -- {self.part[n]}")
        return "\n".join(lines) + "\n"


class NotDistributable(UsageError):
    """The circuit holds an operator the distributed mode cannot place."""


def plan(circuit: Circuit) -> Plan:
    """Partitionings, exchanges and stages of an incremental circuit."""
    if not circuit.incremental:
        raise NotDistributable("only incremental circuits run distributed")
    live = circuit.live()
    order = [n for n in circuit.topological_order() if n in live]
    part: dict[int, Part] = {}
    exchanges: dict[tuple[int, int], Part] = {}
    traces: set[int] = set()  # nodes whose value is a trace
    wishes = _wishes(circuit, order)
    for n in order:
        o = circuit[n]
        fn = RULES.get(type(o))
        if fn is None:
            raise NotDistributable(f"{o.kind} cannot run distributed yet")
        ins = [part[i] for i in o.inputs]
        need = fn(o, ins)
        have = list(ins)
        for port, want in enumerate(need.ports):
            src = o.inputs[port]
            if isinstance(circuit[src], op.Source):
                # a source's rows are read from storage: always moved, to the need, or to what
                # the operators after it will need (one shuffle instead of two), or by row
                exchanges[(n, port)] = want or wishes.get((n, port)) or whole_row(len(circuit[src].types))
                have[port] = exchanges[(n, port)]
        if need.together:
            _co_partition(circuit, n, need, have, traces, exchanges)
        else:
            for port, want in enumerate(need.ports):
                if want is not None and (n, port) not in exchanges and not meets(have[port], want, need.exact):
                    if o.inputs[port] in traces:
                        raise NotDistributable(f"{o.kind} %{n} reads an integral kept by another key")
                    exchanges[(n, port)] = want
        # the output partitioning follows from what the inputs have after any exchange;
        # rows that all came from bucket 0 stay there, whatever the operator's key
        final = [exchanges.get((n, p), have[p]) for p in range(len(o.inputs))]
        single = bool(final) and all(f == SINGLE for f in final)
        part[n] = SINGLE if single else fn(o, final).out
        if isinstance(o, op.Integrate) or (isinstance(o, op.Delay) and o.inputs[0] in traces):
            traces.add(n)
    stages_of = _levels(circuit, order, exchanges, traces)
    return _stages(circuit, order, part, exchanges, stages_of, traces)


def _wishes(circuit: Circuit, order: list[int]) -> dict[tuple[int, int], Part]:
    """Per input port, the partitioning the first keyed operator downstream will need,
    traced back through the linear operators that keep columns (filter, map, plus)."""
    wish_in: dict[tuple[int, int], Part] = {}
    wish_out: dict[int, Part] = {}
    consumers = circuit.consumers()
    for n in reversed(order):
        for c in sorted(consumers[n]):
            for port, src in enumerate(circuit[c].inputs):
                if src == n and (c, port) in wish_in and n not in wish_out:
                    wish_out[n] = wish_in[(c, port)]
        o = circuit[n]
        fn = RULES.get(type(o))
        if fn is None:
            continue
        ports = fn(o, [ANY] * len(o.inputs)).ports
        for port, want in enumerate(ports):
            back = want or _back(o, wish_out.get(n))
            if back is not None:
                wish_in[(n, port)] = back
    return wish_in


def _back(o: op.Operator, wish: Part | None) -> Part | None:
    """The input partitioning that gives `wish` at the output of a column-keeping operator."""
    if wish is None or wish.kind != "hash":
        return None
    if isinstance(o, (op.Filter, op.Negate, op.Plus, op.Delta0)):
        return wish
    if isinstance(o, op.Map) and all(isinstance(o.exprs[c], Col) for c in wish.cols):
        return Part("hash", tuple(o.exprs[c].index for c in wish.cols))  # type: ignore[attr-defined]
    return None


def _co_partition(
    circuit: Circuit, n: int, need: Need, have: list[Part], traces: set[int], exchanges: dict[tuple[int, int], Part]
) -> None:
    """Make a binary operator's inputs partitioned alike. An input that is a trace stays
    as it is kept; the other input is moved to match it."""
    o = circuit[n]
    wants = list(need.ports)
    fixed = [p for p in range(len(o.inputs)) if o.inputs[p] in traces]
    if any(have[p] == SINGLE for p in fixed) or (not fixed and all(h == SINGLE for h in have)):
        wants = [SINGLE for _ in wants]
    for p in fixed:
        if have[p] != wants[p]:
            raise NotDistributable(f"{o.kind} %{n} reads an integral kept by another key")
    for port, want in enumerate(wants):
        assert want is not None
        if port not in fixed and (n, port) not in exchanges and have[port] != want:
            exchanges[(n, port)] = want
        elif (n, port) in exchanges:
            exchanges[(n, port)] = want


def _levels(
    circuit: Circuit, order: list[int], exchanges: dict[tuple[int, int], Part], traces: set[int]
) -> dict[int, list[int]]:
    """The stages each node runs in: after every exchange a later stage. A trace runs in
    the stage of each of its readers: an integral that joins at two depths share (the
    compiler shares equal integrals) is kept once per stage that reads it."""
    level: dict[int, int] = {}
    for n in order:
        o = circuit[n]
        if isinstance(o, op.Source):
            level[n] = 0
            continue
        ins = [level[i] + (1 if (n, p) in exchanges or level[i] == 0 else 0) for p, i in enumerate(o.inputs)]
        level[n] = max([1, *ins])
    stages: dict[int, list[int]] = {n: [level[n]] for n in order}
    consumers = circuit.consumers()
    for n in reversed(order):
        if n in traces:
            readers = sorted({k for c in consumers[n] if c in stages for k in stages[c]})
            stages[n] = readers or stages[n]
    return stages


def _stages(
    circuit: Circuit,
    order: list[int],
    part: dict[int, Part],
    exchanges: dict[tuple[int, int], Part],
    stages_of: dict[int, list[int]],
    traces: set[int],
) -> Plan:
    count = max([0, *(k for ks in stages_of.values() for k in ks)])
    stages = [Stage(k, [n for n in order if k in stages_of[n]]) for k in range(1, count + 1)]
    channels: list[Channel] = []
    index: dict[Channel, int] = {}
    for stage in stages:
        for n in stage.nodes:
            for port, src in enumerate(circuit[n].inputs):
                if stage.index in stages_of[src] and (n, port) not in exchanges:
                    continue
                if src in traces:
                    raise NotDistributable(f"the integral %{src} would have to move between stages")
                ch = Channel(src, exchanges.get((n, port)))
                if ch not in index:
                    index[ch] = len(channels)
                    channels.append(ch)
                    made = stages_of[src][0]  # only traces run in more than one stage
                    if made > 0:
                        stages[made - 1].outputs.append(index[ch])
                stage.inputs[(n, port)] = index[ch]
    return Plan(circuit, part, stages, channels, _checks(circuit, stages, channels))


def _checks(circuit: Circuit, stages: list[Stage], channels: list[Channel]) -> dict[str, Check]:
    """Where each table's change is checked. A check needs all copies of a row in one
    bucket, which any hash of some of its columns gives. So a table whose every read is
    moved by the same key to one stage keeps its share by that key and is checked in
    that stage's task, before the stage runs: its rows then move once, not twice, and a
    refresh runs one job fewer. A table read by differing keys (or only by a global
    operator, which would hold the whole share in one bucket) is checked in stage 0, by
    the hash of the whole row, and moved on from there."""
    routes: dict[str, list[tuple[int, Part]]] = {}
    readers: dict[str, set[int]] = {}
    widths: dict[str, int] = {}
    for ch, channel in enumerate(channels):
        o = circuit[channel.node]
        if isinstance(o, op.Source):
            assert channel.to is not None  # rows read from a table are always moved
            routes.setdefault(o.name, []).append((ch, channel.to))
            readers.setdefault(o.name, set()).update(s.index for s in stages if ch in s.inputs.values())
            widths[o.name] = len(o.types)
    checks = {}
    for table, moves in sorted(routes.items()):
        parts = {to for _, to in moves}
        if len(parts) == 1 and len(readers[table]) == 1 and (share := parts.pop()).kind == "hash":
            checks[table] = Check(readers[table].pop(), share, tuple(moves))
        else:
            checks[table] = Check(0, whole_row(widths[table]), tuple(moves))
    return checks

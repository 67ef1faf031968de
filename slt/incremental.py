"""A query as an incremental view: the tables' contents fed to it as a stream of changes, its
output deltas summed, under a bound on the size of intermediate results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.types import SqlType
from dbspc.runtime.pipeline import Pipeline
from dbspc.runtime.zset import WEIGHT, ZSet


@dataclass(frozen=True)
class Limits:
    """What one run may spend; `dbspc slt` sets them from its options."""

    # an intermediate result past this many values (rows x columns) stops the query with an error
    size_limit: int = 5_000_000
    # address-space cap of a child process, in MB (polars aborts the process past it)
    memory_mb: int = 6144
    # seconds one record may take before its child process is killed
    record_timeout: float = 120.0
    # the harness's changes are valid by construction (typed by the same DDL, consolidated,
    # deleting only rows inserted before), so by default a query's pipeline is stepped through
    # its executor, skipping Pipeline.step's input checks and table traces: a quarter of the time
    check_inputs: bool = False


class IntermediateTooLarge(Exception):
    pass


class WrongResult(Exception):
    """The view's content is not a relation (a negative multiplicity)."""


def size_guard(circuit: Circuit, limit: int) -> Callable[[op.Operator, list[Any]], None]:
    """An executor `before_operator` hook that refuses intermediate results of more than `limit`
    values, before they take all memory: a keyless join is checked before it runs (its output is
    the product of its inputs), every other operator on its inputs."""

    def check(o: op.Operator, inputs: list[Any]) -> None:
        sizes = [(len(v), len(circuit[i].types)) for v, i in zip(inputs, o.inputs, strict=True)]
        if isinstance(o, op.Join) and not o.left_keys:
            (left, _), (right, _) = sizes
            if left * right * max(len(o.types), 1) > limit:
                raise IntermediateTooLarge(
                    f"a cross join of {left} x {right} rows, {len(o.types)} columns (over the harness's limit "
                    f"of {limit} values): the plan joins tables without a key"
                )
        for rows, width in sizes:
            if rows * max(width, 1) > limit:
                raise IntermediateTooLarge(
                    f"an input of {rows} rows x {width} columns to {o.kind} (over the harness's limit of "
                    f"{limit} values)"
                )

    return check


def run_view(
    pipeline: Pipeline, view: str, steps: list[dict[str, ZSet]], limits: Limits
) -> tuple[list[tuple[Any, ...]], tuple[SqlType, ...]]:
    """The view's rows (with duplicates) after the steps, and its column types."""
    pipeline.executor.before_operator = size_guard(pipeline.executor.circuit, limits.size_limit)
    types = pipeline.view_types(view)
    total = ZSet.empty(types)
    for number, changes in enumerate(steps, start=1):
        if limits.check_inputs or not pipeline.incremental:
            delta = pipeline.step(changes)[view]
        else:
            delta = pipeline.executor.step(changes)[view]
        total = ZSet.concat([total, delta], types).consolidate()
        if not total.is_positive():
            bad = total.frame.filter(pl.col(WEIGHT) < 0).row(0)
            raise WrongResult(f"after step {number} the view holds row {bad[:-1]} with weight {bad[-1]}")
    rows: list[tuple[Any, ...]] = []
    for r in total.frame.iter_rows():
        rows.extend([tuple(r[:-1])] * int(r[-1]))
    return rows, types

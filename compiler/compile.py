"""The compiler's front door: SQL text to an (incremental) circuit."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.deep_stack import deep
from dbspc.compiler.dialect import semantics_of
from dbspc.compiler.frontend.program import Program, compile_program
from dbspc.compiler.incremental.passes import optimize
from dbspc.compiler.logical.time_zone import localize, zone_id
from dbspc.compiler.lower.lower import lower_views


@dataclass
class Compiled:
    program: Program
    circuit: Circuit


def compile_sql(
    text: str,
    dialect: str = "spark",
    incremental: bool = True,
    base: Program | None = None,
    time_zone: str = "UTC",
) -> Compiled:
    """The circuit of `text`'s views; with `base`, of `text` read after `base`'s tables
    and views, which are bound once and reused (a harness running many queries over
    one schema). Positions in errors are `text`'s own. `time_zone` is Spark's session
    time zone, in which TIMESTAMP values meet the calendar (compiler/logical/time_zone.py)."""
    zone = zone_id(time_zone)

    def run() -> Compiled:
        program = compile_program(text, dialect, base)
        views = list(program.views.values())
        if zone is not None:
            plans = localize([v.plan for v in views], zone)
            views = [dataclasses.replace(v, plan=p) for v, p in zip(views, plans, strict=True)]
        lifted = lower_views(views, semantics_of(dialect).eager_operands)
        return Compiled(program, optimize(lifted, incremental))

    return deep(run)

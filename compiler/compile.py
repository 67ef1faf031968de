"""The compiler's front door: SQL text to an (incremental) circuit."""

from __future__ import annotations

from dataclasses import dataclass

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.deep_stack import deep
from dbspc.compiler.frontend.program import Program, compile_program
from dbspc.compiler.incremental.passes import optimize
from dbspc.compiler.lower.lower import lower_views


@dataclass
class Compiled:
    program: Program
    circuit: Circuit


def compile_sql(text: str, dialect: str = "spark", incremental: bool = True, base: Program | None = None) -> Compiled:
    """The circuit of `text`'s views; with `base`, of `text` read after `base`'s tables
    and views, which are bound once and reused (a harness running many queries over
    one schema). Positions in errors are `text`'s own."""

    def run() -> Compiled:
        program = compile_program(text, dialect, base)
        lifted = lower_views(list(program.views.values()))
        return Compiled(program, optimize(lifted, incremental))

    return deep(run)

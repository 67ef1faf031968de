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


def compile_sql(text: str, dialect: str = "spark", incremental: bool = True) -> Compiled:
    def run() -> Compiled:
        program = compile_program(text, dialect)
        lifted = lower_views(list(program.views.values()))
        return Compiled(program, optimize(lifted, incremental))

    return deep(run)

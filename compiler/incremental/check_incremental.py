"""After the passes: no plain I or D remains where an incremental operator belongs.

In the final circuit every integral is read through a delay, by a join or by H, which
probe its index; a D left over, or an I read directly, would mean a rule failed to fire
and the circuit would recompute from scratch.
"""

from __future__ import annotations

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.errors import InternalCompilerError


def check_incremental(c: Circuit) -> Circuit:
    consumers = c.consumers()
    for n, o in enumerate(c.nodes):
        if o.needs_incremental_form:
            raise InternalCompilerError(f"%{n} {o.kind} survived incrementalization")
        if isinstance(o, op.Integrate):
            for user in consumers[n]:
                if not isinstance(c[user], op.Delay):
                    raise InternalCompilerError(f"integral %{n} is read directly by %{user} {c[user].kind}")
        if isinstance(o, op.Delay):
            if not isinstance(c[o.inputs[0]], op.Integrate):
                raise InternalCompilerError(f"delay %{n} of a non-integral is not supported by the runtime")
            for user in consumers[n]:
                if not c[user].reads_state:
                    raise InternalCompilerError(f"state %{n} is read by %{user} {c[user].kind}")
    c.validate()
    return c

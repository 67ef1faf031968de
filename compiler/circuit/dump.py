"""Canonical renderings of a circuit: text, JSON and Graphviz dot.

Nodes are numbered in a deterministic topological order, so the same program always
prints the same dump and a golden diff reads as a code review.
"""

from __future__ import annotations

import json
from typing import Any

from compiler.circuit import operators as op
from compiler.circuit.circuit import Circuit


def numbering(c: Circuit) -> dict[int, int]:
    live = c.live()
    order = [n for n in c.topological_order() if n in live]
    return {n: i for i, n in enumerate(order)}


def _types(o: op.Operator) -> str:
    return "(" + ", ".join(t.sql() for t in o.types) + ")"


def to_text(c: Circuit) -> str:
    num = numbering(c)
    mode = "incremental" if c.incremental else "non-incremental"
    lines = [f"-- circuit ({mode}): {len(num)} nodes"]
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        o = c[n]
        params = o.params()
        head = o.kind + (f"[{params}]" if params else "")
        args = ", ".join(f"%{num[s]}" for s in o.inputs)
        lines.append(f"%{i} = {head}({args}) : {_types(o)}")
    return "\n".join(lines) + "\n"


def to_json(c: Circuit) -> str:
    num = numbering(c)
    nodes: list[dict[str, Any]] = []
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        o = c[n]
        nodes.append(
            {
                "id": i,
                "kind": o.kind,
                "params": o.params(),
                "inputs": [num[s] for s in o.inputs],
                "types": [t.sql() for t in o.types],
                "linear": o.linear,
                "stateful": o.stateful or isinstance(o, op.Delay),
            }
        )
    return json.dumps({"incremental": c.incremental, "nodes": nodes}, indent=2, sort_keys=True) + "\n"


_SHAPES = {
    "source": "invhouse",
    "output": "house",
    "integrate": "box3d",
    "delay": "square",
    "join": "diamond",
    "distinct_h": "octagon",
    "aggregate_incremental": "octagon",
}


def to_dot(c: Circuit) -> str:
    num = numbering(c)
    lines = ["digraph circuit {", "  rankdir=TB;", '  node [fontname="monospace"];']
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        o = c[n]
        label = o.kind if not o.params() else f"{o.kind}\\n{o.params()}"
        label = label.replace('"', '\\"')
        shape = _SHAPES.get(o.kind, "ellipse")
        lines.append(f'  n{i} [label="%{i} {label}", shape={shape}];')
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        for port, s in enumerate(c[n].inputs):
            lines.append(f'  n{num[s]} -> n{i} [label="{port}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"

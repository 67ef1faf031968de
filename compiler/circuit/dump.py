"""Canonical renderings of a circuit: text, JSON and Graphviz dot.

Nodes are numbered in a deterministic topological order, so the same program always
prints the same dump and a golden diff reads as a code review.
"""

from __future__ import annotations

import json
from typing import Any

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit, body_order


def numbering(c: Circuit) -> dict[int, int]:
    live = c.live()
    order = [n for n in c.topological_order() if n in live]
    return {n: i for i, n in enumerate(order)}


def _types(o: op.Operator) -> str:
    return "(" + ", ".join(t.sql() for t in o.types) + ")"


def inner_numbering(body: tuple[op.Operator, ...]) -> dict[int, int]:
    """Deterministic numbering of a scope's body, in `body_order`."""
    return {n: i for i, n in enumerate(body_order(body))}


def head(o: op.Operator) -> str:
    params = o.params()
    return o.kind + (f"[{params}]" if params else "")


def _scope_lines(o: op.Scope | op.ScopeIncremental, num: dict[int, int]) -> list[str]:
    inner = inner_numbering(o.body)
    lines = []
    for n, i in sorted(inner.items(), key=lambda kv: kv[1]):
        b = o.body[n]
        if isinstance(b, op.ScopeInput):
            outer = f"%{num[o.inputs[b.index]]}"
            text = f"delta0({outer})" if isinstance(o, op.ScopeIncremental) else f"integrate(delta0({outer}))"
            lines.append(f"  #{i} = {text} : {_types(b)}")
            continue
        args = ", ".join(f"#{inner[s]}" for s in b.inputs)
        note = "  -- feedback" if isinstance(b, op.Delay) else ""
        lines.append(f"  #{i} = {head(b)}({args}) : {_types(b)}{note}")
    for name, r in zip(o.names, o.results, strict=True):
        lines.append(f"  result {name} = #{inner[r]}  -- integral at the scope's exit")
    return ["{", *lines, "}"]


def to_text(c: Circuit) -> str:
    num = numbering(c)
    mode = "incremental" if c.incremental else "non-incremental"
    lines = [f"-- circuit ({mode}): {len(num)} nodes"]
    for n, i in sorted(num.items(), key=lambda kv: kv[1]):
        o = c[n]
        args = ", ".join(f"%{num[s]}" for s in o.inputs)
        lines.append(f"%{i} = {head(o)}({args}) : {_types(o)}")
        if isinstance(o, (op.Scope, op.ScopeIncremental)):
            lines[-1] += " " + _scope_lines(o, num)[0]
            lines.extend(_scope_lines(o, num)[1:])
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
        if isinstance(o, (op.Scope, op.ScopeIncremental)):
            inner = inner_numbering(o.body)
            nodes[-1]["body"] = [
                {
                    "id": inner[b],
                    "kind": o.body[b].kind,
                    "params": o.body[b].params(),
                    "inputs": [inner[x] for x in o.body[b].inputs],
                    "types": [t.sql() for t in o.body[b].types],
                    "feedback": isinstance(o.body[b], op.Delay),
                }
                for b in sorted(inner, key=inner.__getitem__)
            ]
            nodes[-1]["results"] = {name: inner[r] for name, r in zip(o.names, o.results, strict=True)}
    return json.dumps({"incremental": c.incremental, "nodes": nodes}, indent=2, sort_keys=True) + "\n"


def _dot_scope(o: op.Scope | op.ScopeIncremental, i: int, num: dict[int, int]) -> list[str]:
    """The scope as a cluster: δ0 at entry, z⁻¹ feedback edges dashed, ∫ at exit."""
    inner = inner_numbering(o.body)
    out = [f"  subgraph cluster_{i} {{", f'    label="%{i} {o.kind} [{o.params()}]"; style=rounded;']
    for b, j in sorted(inner.items(), key=lambda kv: kv[1]):
        node = o.body[b]
        label = "delta0" if isinstance(node, op.ScopeInput) else node.kind
        if node.params() and not isinstance(node, op.ScopeInput):
            label += "\\n" + node.params().replace('"', '\\"')
        out.append(f'    s{i}_{j} [label="#{j} {label}"];')
    out.append(f'    s{i}_exit [label="integral (exit)", shape=invtriangle];')
    out.append("  }")
    for b, j in sorted(inner.items(), key=lambda kv: kv[1]):
        node = o.body[b]
        if isinstance(node, op.ScopeInput):
            out.append(f"  n{num[o.inputs[node.index]]} -> s{i}_{j};")
        for s in node.inputs:
            style = ' [style=dashed, label="z-1"]' if isinstance(node, op.Delay) else ""
            out.append(f"  s{i}_{inner[s]} -> s{i}_{j}{style};")
    for r in o.results:
        out.append(f"  s{i}_{inner[r]} -> s{i}_exit;")
    out.append(f"  s{i}_exit -> n{i};")
    return out


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
        o = c[n]
        if isinstance(o, (op.Scope, op.ScopeIncremental)):
            lines.extend(_dot_scope(o, i, num))
            continue
        for port, s in enumerate(o.inputs):
            lines.append(f'  n{num[s]} -> n{i} [label="{port}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"

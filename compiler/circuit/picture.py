"""Circuit pictures with no system package: SVG drawn here, and a self-contained HTML page.

The layout is layered (Sugiyama-style, one pass): an operator's layer is the longest path
to it from the circuit's sources, and each layer is ordered by the mean position of its
inputs. A recursive scope is drawn as a box holding its own body, laid out the same way;
edges into a delay inside a scope are the feedback (z⁻¹) and are drawn dashed on the
side. Node ids are the dump's (`%i` outside, `#i` inside a scope), so a picture, the
text dump and the incrementality report name operators alike.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import inner_numbering, numbering
from dbspc.compiler.circuit.report import operator_cost

CHAR_W, LINE_H, PAD, GAP_X, GAP_Y = 7.2, 15, 8, 24, 38
MAX_LABEL = 44
_FILL = {"change": "#eef6ee", "group": "#fdf5e0", "state": "#fbe3e3"}


@dataclass
class _Box:
    ref: str
    lines: list[str]
    inputs: list[int]
    feedback: set[int] = field(default_factory=set)  # inputs drawn as feedback edges
    tooltip: str = ""
    fill: str = "#f4f6fb"
    inner: _Layout | None = None
    w: float = 0
    h: float = 0
    x: float = 0
    y: float = 0


@dataclass
class _Layout:
    boxes: list[_Box]
    w: float = 0
    h: float = 0


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _place(boxes: list[_Box]) -> _Layout:
    for b in boxes:
        if b.inner is not None:
            b.w = max(b.inner.w + 2 * PAD, max(len(t) for t in b.lines) * CHAR_W + 2 * PAD)
            b.h = b.inner.h + len(b.lines) * LINE_H + 2 * PAD
        else:
            b.w = max(len(t) for t in b.lines) * CHAR_W + 2 * PAD
            b.h = len(b.lines) * LINE_H + PAD
    layer: dict[int, int] = {}
    for i, b in enumerate(boxes):  # boxes are in topological order (feedback excepted)
        ins = [layer[s] for s in b.inputs if s in layer and s not in b.feedback]
        layer[i] = 1 + max(ins) if ins else 0
    rows: dict[int, list[int]] = {}
    for i in range(len(boxes)):
        rows.setdefault(layer[i], []).append(i)
    centre: dict[int, float] = {}
    y, width = 0.0, 0.0
    for r in sorted(rows):
        members = rows[r]
        members.sort(key=lambda i: _mean([centre[s] for s in boxes[i].inputs if s in centre], i))
        x = 0.0
        for i in members:
            boxes[i].x, boxes[i].y = x, y
            centre[i] = x + boxes[i].w / 2
            x += boxes[i].w + GAP_X
        width = max(width, x - GAP_X)
        y += max(boxes[i].h for i in members) + GAP_Y
    return _Layout(boxes, width, max(y - GAP_Y, 0))


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default * 1000.0


def _top_boxes(c: Circuit) -> list[_Box]:
    num = numbering(c)
    order = sorted(num, key=num.__getitem__)
    index = {n: i for i, n in enumerate(order)}
    boxes = []
    for n in order:
        o = c[n]
        cost = operator_cost(c, n)
        tip = f"%{num[n]} {o.kind}: state {cost.state}; cost per change {cost.time}"
        lines = [f"%{num[n]} {o.kind}"] + ([_label(o.params())] if o.params() else [])
        box = _Box(f"%{num[n]}", lines, [index[s] for s in o.inputs], tooltip=tip, fill=_FILL[cost.grows])
        if isinstance(o, (op.Scope, op.ScopeIncremental)):
            box.inner = _place(_scope_boxes(o))
            box.fill = "#ffffff"
        boxes.append(box)
    return boxes


def _scope_boxes(o: op.Scope | op.ScopeIncremental) -> list[_Box]:
    inner = inner_numbering(o.body)
    order = sorted(inner, key=inner.__getitem__)
    index = {n: i for i, n in enumerate(order)}
    boxes = []
    for n in order:
        b = o.body[n]
        if isinstance(b, op.ScopeInput):
            text = "δ0" if isinstance(o, op.ScopeIncremental) else "∫ δ0"
            boxes.append(_Box(f"#{inner[n]}", [f"#{inner[n]} {text} (input {b.index})"], [], fill="#eef2fb"))
            continue
        lines = [f"#{inner[n]} {b.kind}"] + ([_label(b.params())] if b.params() else [])
        box = _Box(f"#{inner[n]}", lines, [index[s] for s in b.inputs], tooltip=f"#{inner[n]} {b.kind}")
        if isinstance(b, op.Delay):  # z⁻¹ inside a scope: its input closes the loop
            box.feedback = set(box.inputs)
            box.fill = "#eef2fb"
        boxes.append(box)
    return boxes


def _draw(layout: _Layout, dx: float, dy: float, out: list[str]) -> None:
    boxes = layout.boxes
    for b in boxes:
        x, y = dx + b.x, dy + b.y
        title = f"<title>{html.escape(b.tooltip)}</title>" if b.tooltip else ""
        cls = "scope" if b.inner is not None else "node"
        out.append(f'<g class="{cls}" data-ref="{html.escape(b.ref)}">{title}')
        dash = ' stroke-dasharray="6 3"' if b.inner is not None else ""
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{b.w:.1f}" height="{b.h:.1f}" rx="6" '
            f'fill="{b.fill}" stroke="#4a5a7a"{dash}/>'
        )
        for k, text in enumerate(b.lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            out.append(f'<text x="{x + PAD:.1f}" y="{y + PAD + 9 + k * LINE_H:.1f}"{weight}>{html.escape(text)}</text>')
        out.append("</g>")
        if b.inner is not None:
            _draw(b.inner, x + PAD, y + PAD + len(b.lines) * LINE_H, out)
    for b in boxes:
        for s in b.inputs:
            src = boxes[s]
            x1, y1 = dx + src.x + src.w / 2, dy + src.y + src.h
            x2, y2 = dx + b.x + b.w / 2, dy + b.y
            if s in b.feedback:  # back up the side: the loop through z⁻¹
                side = dx + max(src.x + src.w, b.x + b.w) + GAP_X / 2
                out.append(
                    f'<path class="feedback" d="M{x1:.1f},{y1:.1f} C{side:.1f},{y1 + 20:.1f} '
                    f'{side:.1f},{y2 - 20:.1f} {x2:.1f},{y2:.1f}" fill="none" stroke="#7a4a4a" '
                    'stroke-dasharray="4 3" marker-end="url(#arrow)"/>'
                )
            else:
                out.append(
                    f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#4a5a7a" '
                    'marker-end="url(#arrow)"/>'
                )


def to_svg(c: Circuit) -> str:
    """The circuit as a standalone SVG document (deterministic: a golden diff is a review)."""
    layout = _place(_top_boxes(c))
    margin = 16 + GAP_X
    w, h = layout.w + 2 * margin, layout.h + 2 * 16
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="monospace" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#4a5a7a"/></marker></defs>',
    ]
    _draw(layout, 16, 16, out)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def to_html(incremental: Circuit, lifted: Circuit | None = None, title: str = "dbspc circuit") -> str:
    """One self-contained page: the incremental circuit's picture beside its cost table
    (each operator's state, cost per change and growth), per-view verdicts, and the
    non-incremental (lifted) circuit for comparison."""
    from dbspc.compiler.circuit.explain import view_costs

    num = numbering(incremental)
    rows = []
    for n in sorted(num, key=num.__getitem__):
        cost = operator_cost(incremental, n)
        o = incremental[n]
        rows.append(
            f'<tr class="{cost.grows}"><td>%{num[n]}</td><td>{html.escape(o.kind)}</td>'
            f"<td>{html.escape(cost.state)}</td><td>{html.escape(cost.time)}</td><td>{cost.grows}</td></tr>"
        )
    verdicts = "".join(
        f"<li><b>{html.escape(v.name)}</b>: {html.escape(v.verdict)}</li>" for v in view_costs(incremental)
    )
    lifted_part = ""
    if lifted is not None:
        lifted_part = (
            f'<section><h2>Non-incremental (lifted) circuit</h2><div class="pic">{to_svg(lifted)}</div></section>'
        )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #1d2433; }}
.row {{ display: flex; gap: 2em; align-items: flex-start; flex-wrap: wrap; }}
.pic {{ overflow: auto; border: 1px solid #d8dde8; padding: 0.5em; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border: 1px solid #d8dde8; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }}
tr.group {{ background: {_FILL["group"]}; }} tr.state {{ background: {_FILL["state"]}; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<ul>{verdicts}</ul>
<section class="row"><div class="pic">{to_svg(incremental)}</div>
<table><thead><tr><th>id</th><th>operator</th><th>state kept</th><th>cost per change</th><th>grows with</th>
</tr></thead>
<tbody>{"".join(rows)}</tbody></table></section>
{lifted_part}
</body></html>
"""

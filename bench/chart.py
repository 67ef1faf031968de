"""SVG line charts for the benchmarks (no plotting library): one x axis on a log scale
(sizes), one y axis on a log scale (times), a line and points per series, a legend."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 380, 70, 170, 40, 50
COLOURS = ("#2a6fdb", "#d9534f", "#3a9a4a", "#a05cc0", "#e08a1e")


def _ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _fmt(v: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= size:
            return f"{v / size:g}{unit}"
    return f"{v:g}"


def line_chart(series: Mapping[str, Sequence[tuple[float, float]]], title: str, x_label: str, y_label: str) -> str:
    xs = [x for points in series.values() for x, _ in points]
    ys = [y for points in series.values() for _, y in points]
    x_ticks, y_ticks = _ticks(min(xs), max(xs)), _ticks(min(ys), max(ys))
    x0, x1 = math.log10(x_ticks[0]), math.log10(x_ticks[-1])
    y0, y1 = math.log10(y_ticks[0]), math.log10(y_ticks[-1])
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x0) / max(x1 - x0, 1e-9) * pw

    def py(y: float) -> float:
        return TOP + ph - (math.log10(y) - y0) / max(y1 - y0, 1e-9) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
        'font-family="sans-serif" font-size="12">',
        f'<text x="{LEFT}" y="22" font-size="14" font-weight="bold">{html.escape(title)}</text>',
        f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>',
    ]
    for t in x_ticks:
        out.append(f'<line x1="{px(t):.1f}" y1="{TOP}" x2="{px(t):.1f}" y2="{TOP + ph}" stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{TOP + ph + 16}" text-anchor="middle">{_fmt(t)}</text>')
    for t in y_ticks:
        out.append(f'<line x1="{LEFT}" y1="{py(t):.1f}" x2="{LEFT + pw}" y2="{py(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 10}" text-anchor="middle">{html.escape(x_label)}</text>')
    out.append(
        f'<text x="16" y="{TOP + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {TOP + ph / 2})">'
        f"{html.escape(y_label)}</text>"
    )
    for k, (name, points) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(points))
        out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{colour}"/>' for x, y in points]
        ly = TOP + 10 + 20 * k
        out.append(
            f'<line x1="{LEFT + pw + 14}" y1="{ly}" x2="{LEFT + pw + 34}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{LEFT + pw + 40}" y="{ly + 4}">{html.escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

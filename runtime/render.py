"""Printing output deltas: an aligned table for people, JSON lines for programs."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from pathlib import Path
from typing import Any

from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import numbering
from dbspc.runtime.zset import WEIGHT, ZSet, col_name


def json_value(v: Any) -> Any:
    """NULL is null; decimals, dates and timestamps are strings; non-finite floats too;
    an ARRAY is a list of such values."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, list):
        return [json_value(e) for e in v]
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    return str(v)


def text_value(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):  # as Spark shows an array: [1, 2], [a, b]
        return "[" + ", ".join(text_value(e) for e in v) + "]"
    j = json_value(v)
    return j if isinstance(j, str) else json.dumps(j)


def jsonl_lines(step: int, view: str, delta: ZSet) -> list[str]:
    return [
        json.dumps({"step": step, "view": view, "row": [json_value(v) for v in row], "weight": w})
        for row, w in delta.to_rows()
    ]


def table_lines(step: int, view: str, columns: tuple[str, ...], delta: ZSet) -> list[str]:
    rows = [[text_value(v) for v in row] + [f"{w:+d}"] for row, w in delta.to_rows()]
    header = [*columns, "weight"]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    out = [f"-- step {step}: view {view} ({len(rows)} change{'s' if len(rows) != 1 else ''})"]
    if rows:
        out.append(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
        for r in rows:
            out.append(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return out


def state_sizes(circuit: Circuit, sizes: dict[int, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """(rows, bytes) per stateful operator, labelled as in the circuit dump ("%3 integrate")."""
    num = numbering(circuit)
    # z⁻¹ of an integral reads the integral's own trace: it holds nothing of its own
    own = [n for n in sizes if n in num and not _delays_integral(circuit, n)]
    ordered = sorted(own, key=num.__getitem__)
    return {f"%{num[n]} {circuit[n].kind}": sizes[n] for n in ordered}


def _delays_integral(circuit: Circuit, n: int) -> bool:
    o = circuit[n]
    return isinstance(o, op.Delay) and isinstance(circuit[o.inputs[0]], op.Integrate)


def state_lines(sizes: dict[str, tuple[int, int]]) -> list[str]:
    """The state each operator holds now, aligned, with the total."""
    rows = [(label, f"{r:,} rows", human_bytes(b)) for label, (r, b) in sizes.items()]
    total = sum(b for _, b in sizes.values())
    rows.append(("total", f"{sum(r for r, _ in sizes.values()):,} rows", human_bytes(total)))
    widths = [max(len(r[k]) for r in rows) for k in range(2)]
    return ["-- state held:"] + [f"-- {a.ljust(widths[0])}  {b.rjust(widths[1])}  {c}" for a, b, c in rows]


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} GiB"


def write_deltas(
    directory: Path, fmt: str, views: dict[str, tuple[tuple[str, ...], list[tuple[int, ZSet]]]]
) -> list[Path]:
    """Each view's deltas of every step as one file (csv or parquet) in `directory`:
    columns `step`, `weight`, then the view's own. Arrays are shown as in the table
    output in CSV, and kept as lists in parquet."""
    import polars as pl

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for view, (names, steps) in views.items():
        frames = [
            d.frame.select(
                pl.lit(n, dtype=pl.Int64).alias("step"),
                pl.col(WEIGHT).alias("weight"),
                *[pl.col(col_name(i)).alias(name) for i, name in enumerate(names)],
            )
            for n, d in steps
        ]
        types = steps[0][1].types if steps else ()
        frame = pl.concat(frames) if frames else pl.DataFrame({"step": [], "weight": []})
        path = directory / f"{view}.{fmt}"
        if fmt == "csv":
            arrays = [name for name, t in zip(names, types, strict=False) if t.element is not None]
            shown = [
                pl.format("[{}]", pl.col(a).list.eval(pl.element().cast(pl.String)).list.join(", ")).alias(a)
                for a in arrays
            ]
            frame.with_columns(shown).write_csv(path)
        else:
            frame.write_parquet(path)
        written.append(path)
    return written

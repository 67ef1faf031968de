"""`dbspc compile --format svg|html`: pictures drawn without graphviz. For a golden of
each kind, the SVG is well-formed, has one box per operator (a scope's body inside its
box), no two boxes overlap unless one holds the other, everything is inside the canvas;
the HTML page is self-contained and lists every operator's state and cost."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbspc.cli import main
from dbspc.compiler.circuit import operators as op
from dbspc.compiler.circuit.dump import numbering
from dbspc.compiler.compile import compile_sql
from dbspc.compiler.frontend.script_split import split_script

REPO = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
KINDS = {
    "join": REPO / "examples" / "orders.sql",
    "aggregate": REPO / "sql_tests" / "paper_4_4_ivm.sql",
    "recursion": REPO / "sql_tests" / "recursive_reachability.sql",
}


def rects(root: ET.Element) -> list[tuple[float, float, float, float]]:
    return [
        (float(r.get("x", 0)), float(r.get("y", 0)), float(r.get("width", 0)), float(r.get("height", 0)))
        for r in root.iter(f"{SVG}rect")
    ]


def overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def inside(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return b[0] <= a[0] and b[1] <= a[1] and a[0] + a[2] <= b[0] + b[2] and a[1] + a[3] <= b[1] + b[3]


@pytest.mark.parametrize("kind", list(KINDS))
def test_svg_of_each_kind(kind: str) -> None:
    path = KINDS[kind]
    result = CliRunner().invoke(main, ["compile", "--format", "svg", str(path)])
    assert result.exit_code == 0, result.output
    root = ET.fromstring(result.stdout)
    circuit = compile_sql(split_script(path.read_text()).program, "spark", True).circuit
    live = numbering(circuit)
    scopes = [circuit[n] for n in live if isinstance(circuit[n], (op.Scope, op.ScopeIncremental))]
    assert bool(scopes) == (kind == "recursion")
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") in ("node", "scope")]
    assert len(groups) == len(live) + sum(len(s.body) for s in scopes)
    boxes = rects(root)
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[1] >= 0 and a[0] + a[2] <= width and a[1] + a[3] <= height
        for b in boxes[i + 1 :]:
            assert not overlap(a, b) or inside(a, b) or inside(b, a), (a, b)
    edges = len(list(root.iter(f"{SVG}line"))) + len(list(root.iter(f"{SVG}path"))) - 1  # minus the arrowhead
    assert edges == sum(len(circuit[n].inputs) for n in live) + sum(len(b.inputs) for s in scopes for b in s.body)
    if kind == "recursion":
        assert root.find(f".//{SVG}path[@class='feedback']") is not None  # the loop through z⁻¹


def test_html_page_is_self_contained() -> None:
    result = CliRunner().invoke(main, ["compile", "--format", "html", str(KINDS["join"])])
    assert result.exit_code == 0
    page = result.stdout
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2  # incremental and lifted
    assert not re.search(r"<(script|link|img)\b", page) and "src=" not in page
    circuit = compile_sql(split_script(KINDS["join"].read_text()).program, "spark", True).circuit
    assert page.count("<tr class=") == len(numbering(circuit))
    assert "cost follows the change" in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium: `make test` installs Debian's chromium package")
@pytest.mark.parametrize("kind", list(KINDS))
def test_html_page_in_headless_chromium(kind: str, tmp_path: Path) -> None:
    """The page loads in a real browser with no console message, its DOM has every
    operator's box, and a screenshot is taken."""
    assert CHROMIUM is not None
    page = tmp_path / f"{kind}.html"
    result = CliRunner().invoke(main, ["compile", "--format", "html", str(KINDS[kind])])
    page.write_text(result.stdout)
    flags = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags += ["--enable-logging=stderr", "--v=0", "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
    assert dom.stdout.count('class="node"') + dom.stdout.count('class="scope"') >= result.stdout.count("<tr class=")
    shot = tmp_path / f"{kind}.png"
    subprocess.run([*flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # a drawn page, not a blank one

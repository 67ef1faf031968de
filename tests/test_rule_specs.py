"""Each rewrite rule's Before/After example, executable: tests/rules/<rule>.spec.

A spec holds a program, the passes that prepare the circuit the rule is given, and two
dumps: the circuit before the rule and after it (the way Materialize keeps one spec per
transform). The test compiles the program, runs the preparation, checks the `before`
dump, applies the rule alone, and checks the `after` dump, so a rule's documented
example can never go stale. `pytest --update-goldens` rewrites the dumps.

    -- rule: join_bilinear
    -- law: (a ⋈ b)^Δ = a⋈b + z⁻¹(I a)⋈b + a⋈z⁻¹(I b)  (DBSP Thm 3.4)
    -- prepare: incrementalize
    CREATE TABLE ...; CREATE VIEW ...;
    ---- before
    %0 = source[a]() : ...
    ---- after
    ...
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from dbspc.compiler.circuit.circuit import Circuit
from dbspc.compiler.circuit.dump import to_text
from dbspc.compiler.frontend.program import compile_program
from dbspc.compiler.incremental import passes
from dbspc.compiler.incremental.rewrite import rebuild
from dbspc.compiler.lower.lower import lower_views

SPECS = sorted((Path(__file__).parent / "rules").glob("*.spec"))

# The whole passes of compiler/incremental/passes.py, and each push rule applied alone.
STEPS: dict[str, Callable[[Circuit], Circuit]] = {
    p.__name__: p for p in (*passes.LIFTED_PASSES, *passes.INCREMENTAL_PASSES)
}
STEPS.update({r.__name__: (lambda c, r=r: rebuild(c, (r,))) for r in passes.PUSH_RULES})


def _apply(names: list[str], c: Circuit) -> Circuit:
    for name in names:
        if name not in STEPS:
            raise AssertionError(f"unknown pass or rule {name!r}; known: {', '.join(sorted(STEPS))}")
        c = STEPS[name](c)
    return c


def _parse(text: str) -> tuple[dict[str, str], str, str, str]:
    head, before, after = re.split(r"^---- (?:before|after)\n", text, flags=re.MULTILINE)
    meta = dict(re.findall(r"^-- (\w+): (.*)$", head, flags=re.MULTILINE))
    program = "\n".join(line for line in head.splitlines() if not line.startswith("-- "))
    return meta, program, before, after


def test_every_push_rule_and_pass_has_a_spec() -> None:
    covered = {_parse(p.read_text())[0]["rule"] for p in SPECS}
    # push_integrals is the sweep of all push rules; check_incremental only checks; every
    # rebuild already drops dead nodes, and dumps print live nodes only, so dead_code's
    # example would show no change.
    expected = set(STEPS) - {"push_integrals", "check_incremental", "dead_code"}
    assert expected <= covered, f"rules without a spec: {sorted(expected - covered)}"


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_rule_spec(path: Path, update_goldens: bool) -> None:
    meta, program, before, after = _parse(path.read_text())
    assert path.stem == meta["rule"], f"{path.name} names rule {meta['rule']}"
    assert "law" in meta, f"{path.name} states the law it implements"
    c = lower_views(list(compile_program(program).views.values()))
    prepare = [s.strip() for s in meta.get("prepare", "").split(",") if s.strip()]
    c = _apply(prepare, c)
    got_before = to_text(c)
    got_after = to_text(_apply([meta["rule"]], c))
    assert got_before != got_after, f"{meta['rule']} does not change its example"
    if update_goldens:
        head = path.read_text().split("---- before\n")[0]
        path.write_text(f"{head}---- before\n{got_before}---- after\n{got_after}")
        return
    assert got_before == before, f"{path.name}: the circuit given to the rule changed"
    assert got_after == after, f"{path.name}: the rule's result changed"

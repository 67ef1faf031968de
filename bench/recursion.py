"""Benchmark: incrementally maintained recursive views (issue 3) against recomputation.

Workload. A random directed graph of `--nodes` nodes (20,000), `--degree` × nodes edges
(1.5 → 30,000), no self-loops or duplicates. Nodes are split into groups of
`--cluster-size` consecutive ids (10) and every edge joins two nodes of one group, so the
graph is made of many small random components: the transitive closure stays computable
(about 100,000 pairs; a uniform random graph with the same number of edges has a giant
strongly connected component and a closure of ~10^8 pairs). `--cluster-size` equal to
`--nodes` gives a uniform G(n, m) graph instead; `--degree` below 0.5 keeps it sub-critical.
The initial graph is loaded in one step; then each of `--steps` (20) steps applies
`--change` (100) edge changes: half deletions of present edges, half insertions of absent
edges of random groups, so the edge count stays constant.

Views (the same SQL text runs in dbspc and in DuckDB):
  tc  the transitive closure, linear recursion with UNION;
  cc  connected components of the undirected graph by label propagation. `--cc set` (the
      default): every node collects the labels of all nodes it reaches, MIN outside the
      recursion (Σ component² labels). `--cc min`: the MIN inside the recursion (one
      least label per node and iteration). Both give the same view. On the default graph
      the MIN form loads 2x faster with half the state, but dbspc's steps are 15-25%
      slower with it (DuckDB's are faster), so `set` is the default; on graphs with large
      components only `min` stays feasible.

For each view, in one run and side by side at every step, it measures:
  1. dbspc's incremental step time (median, p90) after the initial load;
  2. DuckDB's recomputation of the view from scratch on the current edges (median of
     `--duckdb-runs` runs per step), and the speed-up (issue 10's targets: >= 20x at
     200,000 nodes, >= 5x at the default 20,000);
  3. (tc only) pydbsp on the same workload, in its own virtual environment, and the
     speed-up (target >= 100x); see bench/pydbsp_tc.py;
  4. the inner iterations of every step: dbspc's incremental scope against a from-scratch
     evaluation of the same step (a second Pipeline with incremental=False), checking that
     the incremental loop never runs deeper than from scratch;
  5. that dbspc's integrated output equals DuckDB's result after every step
     (`--check-every`).

    .venv/bin/python bench/recursion.py [--nodes 20000] [--steps 20] [--cluster-size 10]
        [--degree 1.5] [--change 100] [--cc set|min] [--pydbsp-nodes N] [--no-pydbsp] [--profile]

pydbsp needs Python >= 3.12: the script looks for python3.12+ on PATH and in
~/.pyenv/versions, creates bench/.venv-pydbsp with it and pip-installs pydbsp there
(once); if there is no such Python it says so and skips that comparison.
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import json
import os
import pstats
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parent.parent
sys.path.append(str(REPO))  # appended: a PYTHONPATH naming another checkout must win

from dbspc.runtime.pipeline import Pipeline  # noqa: E402
from dbspc.runtime.zset import WEIGHT, ZSet  # noqa: E402

# The views use UNION in their recursive CTEs (set semantics, as DuckDB runs them too),
# which Spark refuses and dbspc warns of: known here, so not repeated on every run.
warnings.filterwarnings("ignore", message="recursive CTE .* uses UNION")

PYDBSP_VENV = REPO / "bench" / ".venv-pydbsp"
PYDBSP_DRIVER = REPO / "bench" / "pydbsp_tc.py"
PYDBSP_REQUIREMENT = "pydbsp==2.1.0"  # the API bench/pydbsp_tc.py was written against

TC_QUERY = """WITH RECURSIVE r(x, y) AS (
  SELECT src, dst FROM edges
  UNION
  SELECT e.src, r.y FROM edges e JOIN r ON e.dst = r.x
)
SELECT x, y FROM r"""

# Both directions of an edge go through one derived table, so the CTE refers to itself
# once: DuckDB rejects a second recursive reference in a UNION chain ("Circular reference
# to CTE").
CC_SET_QUERY = """WITH RECURSIVE lab(node, label) AS (
  SELECT src, src FROM edges
  UNION
  SELECT dst, dst FROM edges
  UNION
  SELECT u.b, l.label
  FROM lab l JOIN (SELECT src AS a, dst AS b FROM edges UNION ALL SELECT dst, src FROM edges) u ON l.node = u.a
)
SELECT node, MIN(label) AS component FROM lab GROUP BY node"""

# MIN inside the recursion: each iteration gives every node the least label among its
# neighbours' labels so far; UNION keeps the labels of earlier iterations, so a node's
# least label only decreases, down to its component's least node.
CC_MIN_QUERY = """WITH RECURSIVE lab(node, label) AS (
  SELECT src, src FROM edges
  UNION
  SELECT dst, dst FROM edges
  UNION
  SELECT u.b, MIN(l.label)
  FROM lab l JOIN (SELECT src AS a, dst AS b FROM edges UNION ALL SELECT dst, src FROM edges) u ON l.node = u.a
  GROUP BY u.b
)
SELECT node, MIN(label) AS component FROM lab GROUP BY node"""

CC_QUERIES = {"set": CC_SET_QUERY, "min": CC_MIN_QUERY}
VIEWS = {"tc": TC_QUERY, "cc": CC_SET_QUERY}  # main() sets "cc" from --cc


def program(view: str) -> str:
    return f"CREATE TABLE edges (src INT, dst INT);\nCREATE VIEW {view} AS\n{VIEWS[view]};\n"


# -- workload ------------------------------------------------------------------------------


@dataclass
class Workload:
    nodes: int
    cluster: int
    initial: pl.DataFrame  # c0 = src, c1 = dst (Int32)
    steps: list[pl.DataFrame] = field(default_factory=list)  # c0, c1, w (+1 insert, -1 delete)

    @property
    def edges(self) -> int:
        return self.initial.height


class _EdgeSet:
    """The current edges, for sampling deletions and rejecting duplicate insertions."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int]] = []
        self.where: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self.items)

    def __contains__(self, e: tuple[int, int]) -> bool:
        return e in self.where

    def add(self, e: tuple[int, int]) -> None:
        self.where[e] = len(self.items)
        self.items.append(e)

    def remove(self, e: tuple[int, int]) -> None:
        i = self.where.pop(e)
        last = self.items.pop()
        if i < len(self.items):
            self.items[i] = last
            self.where[last] = i


def _candidates(rng: np.random.Generator, nodes: int, cluster: int, k: int) -> list[tuple[int, int]]:
    """k random edges, each inside one random group of `cluster` consecutive nodes."""
    groups = nodes // cluster
    g = rng.integers(0, groups, k) * cluster
    src = g + rng.integers(0, cluster, k)
    dst = g + rng.integers(0, cluster, k)
    return [(int(s), int(d)) for s, d in zip(src, dst, strict=True) if s != d]


def _frame(edges: list[tuple[int, int]], weights: list[int] | None = None) -> pl.DataFrame:
    data: dict[str, object] = {
        "c0": np.array([e[0] for e in edges], dtype=np.int32),
        "c1": np.array([e[1] for e in edges], dtype=np.int32),
    }
    if weights is not None:
        data[WEIGHT] = np.array(weights, dtype=np.int64)
    return pl.DataFrame(data)


def make_workload(nodes: int, cluster: int, degree: float, steps: int, change: int, seed: int) -> Workload:
    cluster = min(cluster, nodes)
    if cluster < 2:
        raise SystemExit("--cluster-size must be at least 2")
    rng = np.random.default_rng(seed)
    target = int(degree * nodes)
    possible = (nodes // cluster) * cluster * (cluster - 1)
    if target + change > possible * 0.9:
        raise SystemExit(f"--degree {degree} asks for {target} edges; groups of {cluster} hold at most {possible}")
    live = _EdgeSet()
    while len(live) < target:
        for e in _candidates(rng, nodes, cluster, target - len(live) + 16):
            if e not in live and len(live) < target:
                live.add(e)
    w = Workload(nodes, cluster, _frame(live.items))
    half = change // 2
    for _ in range(steps):
        picked = rng.choice(len(live), size=half, replace=False)
        deleted = [live.items[i] for i in picked]
        inserted: list[tuple[int, int]] = []
        seen = set(deleted)
        while len(inserted) < change - half:
            for e in _candidates(rng, nodes, cluster, 2 * (change - half)):
                if e not in live and e not in seen and len(inserted) < change - half:
                    inserted.append(e)
                    seen.add(e)
        for e in deleted:
            live.remove(e)
        for e in inserted:
            live.add(e)
        w.steps.append(_frame(deleted + inserted, [-1] * len(deleted) + [1] * len(inserted)))
    return w


# -- dbspc and DuckDB, side by side ----------------------------------------------------------


@dataclass
class ViewRun:
    view: str
    load_s: float = 0.0
    step_s: list[float] = field(default_factory=list)
    full_step_s: list[float] = field(default_factory=list)
    duckdb_s: list[float] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)  # incremental; [0] is the load
    full_iterations: list[int] = field(default_factory=list)  # from scratch, same steps
    rows: list[int] = field(default_factory=list)  # view size after the load and each step
    delta_rows: list[int] = field(default_factory=list)
    state_rows: int = 0
    checked: int = 0
    mismatches: list[str] = field(default_factory=list)
    kept: dict[int, pl.DataFrame] = field(default_factory=dict)


def _iterations(p: Pipeline) -> int:
    return max(p.executor.iterations.values(), default=0)


def _integrate(contents: pl.DataFrame, delta: ZSet) -> pl.DataFrame:
    if delta.frame.height == 0:
        return contents
    cols = [c for c in contents.columns if c != WEIGHT]
    return (
        pl.concat([contents, delta.frame.select(contents.columns)], how="vertical_relaxed")
        .group_by(cols)
        .agg(pl.col(WEIGHT).sum())
        .filter(pl.col(WEIGHT) != 0)
    )


def _compare(ours: pl.DataFrame, theirs: pl.DataFrame) -> str | None:
    """None if the integrated Z-set `ours` is exactly the set `theirs`, else what differs."""
    cols = [c for c in ours.columns if c != WEIGHT]
    ours_rows = ours.select([pl.col(c).cast(pl.Int64) for c in cols])
    theirs = theirs.select([pl.col(c).cast(pl.Int64).alias(n) for c, n in zip(theirs.columns, cols, strict=True)])
    bad_weights = ours.filter(pl.col(WEIGHT) != 1).height
    missing = theirs.join(ours_rows, on=cols, how="anti", nulls_equal=True).height
    extra = ours_rows.join(theirs, on=cols, how="anti", nulls_equal=True).height
    dupes = theirs.height - theirs.unique().height
    if bad_weights or missing or extra or dupes:
        return f"{missing} rows missing, {extra} extra, {bad_weights} with weight != 1 (DuckDB duplicates: {dupes})"
    return None


class DuckView:
    """DuckDB holding the current edges and recomputing one view from scratch."""

    def __init__(self, view: str, initial: pl.DataFrame) -> None:
        self.query = VIEWS[view]
        self.con = duckdb.connect()
        self.con.execute("CREATE TABLE edges (src INTEGER, dst INTEGER)")
        self.con.register("initial_edges", initial.rename({"c0": "src", "c1": "dst"}).to_arrow())
        self.con.execute("INSERT INTO edges SELECT src, dst FROM initial_edges")
        self.con.unregister("initial_edges")

    def apply(self, change: pl.DataFrame) -> None:
        self.con.register("chg", change.rename({"c0": "src", "c1": "dst", WEIGHT: "w"}).to_arrow())
        self.con.execute("DELETE FROM edges USING chg WHERE edges.src = chg.src AND edges.dst = chg.dst AND chg.w < 0")
        self.con.execute("INSERT INTO edges SELECT src, dst FROM chg WHERE w > 0")
        self.con.unregister("chg")

    def recompute(self, runs: int) -> tuple[float, pl.DataFrame]:
        """The median time of `runs` evaluations (result fetched as Arrow) and the result."""
        times = []
        result = None
        for _ in range(runs):
            t = time.perf_counter()
            table = self.con.sql(self.query).to_arrow_table()
            times.append(time.perf_counter() - t)
            result = table
        assert result is not None
        frame = pl.from_arrow(result)
        assert isinstance(frame, pl.DataFrame)
        return statistics.median(times), frame


def run_view(
    view: str,
    w: Workload,
    *,
    from_scratch: bool = True,
    duckdb_runs: int = 3,
    check_every: int = 1,
    keep: frozenset[int] = frozenset(),
    profile: cProfile.Profile | None = None,
    alongside: Callable[[int], None] | None = None,
) -> ViewRun:
    """Load the graph, then run every step: dbspc incremental, dbspc from scratch (for its
    iteration count), DuckDB's recomputation, the comparison of their results, and then
    `alongside(step)` (pydbsp's same step)."""
    r = ViewRun(view)
    inc = Pipeline.from_sql(program(view))
    full = Pipeline.from_sql(program(view), incremental=False) if from_scratch else None
    types = inc.table_types("edges")
    duck = DuckView(view, w.initial) if duckdb_runs or check_every else None

    initial = ZSet.from_frame(w.initial.with_columns(pl.lit(1, pl.Int64).alias(WEIGHT)), types)
    t = time.perf_counter()
    out = inc.step({"edges": initial})[view]
    r.load_s = time.perf_counter() - t
    r.iterations.append(_iterations(inc))
    if full is not None:
        full.step({"edges": initial})
        r.full_iterations.append(_iterations(full))
    contents = out.frame
    r.rows.append(contents.height)
    if duck is not None:
        duck.recompute(1)  # warm up
    if 0 in keep:
        r.kept[0] = contents

    for number, change in enumerate(w.steps, start=1):
        z = ZSet.from_frame(change, types)
        if profile is not None:
            profile.enable()
        t = time.perf_counter()
        delta = inc.step({"edges": z})[view]
        r.step_s.append(time.perf_counter() - t)
        if profile is not None:
            profile.disable()
        r.iterations.append(_iterations(inc))
        r.delta_rows.append(len(delta))
        contents = _integrate(contents, delta)
        r.rows.append(contents.height)
        if number in keep:
            r.kept[number] = contents
        if full is not None:
            t = time.perf_counter()
            full.step({"edges": z})
            r.full_step_s.append(time.perf_counter() - t)
            r.full_iterations.append(_iterations(full))
        if duck is not None:
            duck.apply(change)
            check = check_every > 0 and (number % check_every == 0 or number == len(w.steps))
            if duckdb_runs or check:
                seconds, result = duck.recompute(max(duckdb_runs, 1))
                if duckdb_runs:
                    r.duckdb_s.append(seconds)
                if check:
                    r.checked += 1
                    problem = _compare(contents, result)
                    if problem:
                        r.mismatches.append(f"step {number}: {problem}")
        if alongside is not None:
            alongside(number)
    r.state_rows = inc.executor.state_rows()
    return r


# -- pydbsp --------------------------------------------------------------------------------


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.stdout.split()
    if out.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])


def find_python312() -> str | None:
    """A Python >= 3.12: python3.12+ on PATH, then ~/.pyenv/versions/3.1x.y."""
    candidates: list[str] = []
    for name in ("python3.14", "python3.13", "python3.12", "python3"):
        found = shutil.which(name)
        if found:
            candidates.append(found)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates.extend(sorted(glob.glob(str(pyenv / "3.1[2-9]*" / "bin" / "python3")), reverse=True))
    for c in candidates:
        v = _version(c)
        if v is not None and v >= (3, 12):
            return c
    return None


def pydbsp_python() -> tuple[str | None, str]:
    """The venv's Python with pydbsp installed (creating it if needed), or None and why."""
    venv_python = PYDBSP_VENV / "bin" / "python"
    check = [str(venv_python), "-c", "import pydbsp.indexed_relational_operators"]
    if venv_python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(venv_python), f"existing {PYDBSP_VENV.relative_to(REPO)}"
    base = find_python312()
    if base is None:
        return None, "no Python >= 3.12 found (PATH, ~/.pyenv/versions): pydbsp comparison skipped"
    print(f"creating {PYDBSP_VENV.relative_to(REPO)} with {base} and installing {PYDBSP_REQUIREMENT} ...", flush=True)
    steps = [
        [base, "-m", "venv", str(PYDBSP_VENV)],
        [str(venv_python), "-m", "pip", "install", "--quiet", PYDBSP_REQUIREMENT],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return None, f"`{shlex.join(cmd)}` failed: {done.stderr.strip()[-500:]}"
    return str(venv_python), f"created {PYDBSP_VENV.relative_to(REPO)} from {base}"


class Pydbsp:
    """bench/pydbsp_tc.py as a subprocess holding pydbsp's circuit on workload `w`: it loads
    the graph at start, and `step()` runs its next step, so that pydbsp's steps interleave
    with dbspc's in the same run (the machine's load then affects both alike)."""

    def __init__(self, python: str, w: Workload, check: list[int], budget: float) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        workload = Path(self.tmp.name) / "workload.json"
        self.result = Path(self.tmp.name) / "result.json"
        steps = [s.rows() for s in w.steps]
        workload.write_text(json.dumps({"initial": w.initial.rows(), "steps": steps, "check": check}))
        self.proc = subprocess.Popen(
            [python, str(PYDBSP_DRIVER), str(workload), str(self.result)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.nodes, self.edges, self.steps_total = w.nodes, w.edges, len(w.steps)
        self.budget = budget
        first = self._read()
        self.load_s = float(first["seconds"])
        self.iterations = [int(first["iterations"])]
        self.step_s: list[float] = []
        self.gc_s: list[float] = []
        self.sanity: list[str] = []
        self.ours_step_s: list[float] = []  # dbspc's steps on the same workload (set by finish)
        self.closure: list[int] = []  # closure rows after each step (set by finish)

    def _read(self) -> dict[str, float]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            assert self.proc.stderr is not None
            raise RuntimeError(f"pydbsp driver failed:\n{self.proc.stderr.read()[-2000:]}")
        out: dict[str, float] = json.loads(line)
        return out

    def step(self, number: int) -> None:
        """Run pydbsp's step `number` (they come in order) unless over the time budget."""
        if sum(self.step_s) > self.budget or number != len(self.step_s) + 1:
            return
        assert self.proc.stdin is not None
        self.proc.stdin.write("step\n")
        self.proc.stdin.flush()
        got = self._read()
        self.step_s.append(float(got["seconds"]))
        self.gc_s.append(float(got["gc_s"]))
        self.iterations.append(int(got["iterations"]))

    def finish(self, ours: ViewRun) -> None:
        """Stop the driver and compare its closures with dbspc's (`ours`, on the same
        workload, kept at the checked steps)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("done\n")
        self.proc.stdin.close()
        self.proc.wait()
        closures = json.loads(self.result.read_text())["closure"]
        self.tmp.cleanup()
        for k, rows in sorted(closures.items(), key=lambda kv: int(kv[0])):
            frame = pl.DataFrame(rows, schema=["c0", "c1", WEIGHT], orient="row")
            problem = _compare(ours.kept[int(k)], frame.drop(WEIGHT))
            if frame.filter(pl.col(WEIGHT) != 1).height:
                problem = "pydbsp's closure has weights != 1"
            self.sanity.append(f"step {k}: " + ("equal" if problem is None else problem))
        self.ours_step_s = ours.step_s[: len(self.step_s)]
        self.closure = ours.rows


# -- report --------------------------------------------------------------------------------


def _ms(xs: list[float], q: float = 0.5) -> float:
    """The median (or the q-quantile, nearest rank) of `xs` seconds, in milliseconds."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    if q == 0.5:
        return statistics.median(s) * 1e3
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1e3


def _f(ms: float) -> str:
    """Milliseconds as printed: a decimal below 10 ms, where whole numbers hide a 2x."""
    return f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"


def print_main_table(runs: dict[str, ViewRun], nodes: int) -> None:
    print("\n### dbspc incremental step vs DuckDB recomputing the view from scratch\n")
    print(
        "| view | view rows (load → last) | load (s) | dbspc step median (ms) | p90 (ms) | output Δ rows median "
        "| DuckDB recompute median (ms) | speed-up | target | dbspc from scratch median (ms) | state rows |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    target = "20x" if nodes >= 200_000 else "5x"  # issue 10
    for r in runs.values():
        speed = _ms(r.duckdb_s) / _ms(r.step_s)
        delta = statistics.median(r.delta_rows) if r.delta_rows else 0
        print(
            f"| {r.view} | {r.rows[0]:,} → {r.rows[-1]:,} | {r.load_s:.1f} | {_f(_ms(r.step_s))} "
            f"| {_f(_ms(r.step_s, 0.9))} | {delta:g} | {_f(_ms(r.duckdb_s))} | {speed:.2f}x | {target} "
            f"| {_f(_ms(r.full_step_s))} | {r.state_rows:,} |"
        )


def print_pydbsp(p: Pydbsp) -> None:
    print("\n### dbspc vs pydbsp: incremental transitive closure, same workload\n")
    print(
        "| nodes | edges | closure (load → last) | steps | pydbsp load (s) | pydbsp step median (ms) | p90 (ms) "
        "| pydbsp GC median (ms, not in step) | dbspc step median (ms) | speed-up | target |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    speed = _ms(p.step_s) / _ms(p.ours_step_s)
    print(
        f"| {p.nodes:,} | {p.edges:,} | {p.closure[0]:,} → {p.closure[-1]:,} | {len(p.step_s)}/{p.steps_total} "
        f"| {p.load_s:.1f} "
        f"| {_f(_ms(p.step_s))} | {_f(_ms(p.step_s, 0.9))} | {_f(_ms(p.gc_s))} | {_f(_ms(p.ours_step_s))} "
        f"| {speed:.1f}x | 100x |"
    )
    print(f"\npydbsp's closure vs dbspc's: {'; '.join(p.sanity)}")
    print(f"pydbsp inner iterations (load, then per step): {p.iterations}")


def _bound(r: ViewRun, i: int) -> int:
    """What the incremental loop may need at step i: max(from scratch at i-1, at i)."""
    return max(r.full_iterations[i - 1], r.full_iterations[i]) if i else r.full_iterations[0]


def print_iterations(runs: dict[str, ViewRun], steps: int) -> None:
    print("\n### Inner iterations per step (incremental vs from scratch)\n")
    for r in runs.values():
        inc = r.iterations[1:]
        if not r.full_iterations:
            print(f"- {r.view}: incremental {r.iterations} (from scratch not run)")
            continue
        full = r.full_iterations[1:]
        over_now = sum(a > b for a, b in zip(inc, full, strict=True))
        over_bound = sum(inc[i - 1] > _bound(r, i) for i in range(1, len(r.iterations)))
        print(
            f"- {r.view}: incremental median {statistics.median(inc):g}, max {max(inc)}; from scratch median "
            f"{statistics.median(full):g}, max {max(full)}. Incremental > from scratch of the same step at "
            f"{over_now}/{len(inc)} steps; > max(from scratch at t-1, t) at {over_bound}/{len(inc)} steps."
        )
    names = [v for v, r in runs.items() if r.full_iterations]
    if not names:
        return
    head = " | ".join(f"{v} ms | {v} inc | {v} scratch | {v} max(t-1, t) | {v} Δ rows" for v in names)
    print(f"\n| step | {head} |")
    print("|---:|" + "---:|" * (5 * len(names)))
    for i in range(steps + 1):
        cells = []
        for v in names:
            r = runs[v]
            ms = f"{r.step_s[i - 1] * 1e3:.0f}" if i else f"{r.load_s * 1e3:.0f} (load)"
            delta = r.delta_rows[i - 1] if i else r.rows[0]
            cells.append(f"{ms} | {r.iterations[i]} | {r.full_iterations[i]} | {_bound(r, i)} | {delta:,}")
        print(f"| {i} | " + " | ".join(cells) + " |")


def print_profile(profile: cProfile.Profile, title: str, limit: int = 25) -> None:
    print(f"\n### cProfile of the incremental steps of {title}\n")
    print("```")
    stats = pstats.Stats(profile, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(r"/(runtime|compiler)/", limit)
    stats.sort_stats("tottime").print_stats(12)
    print("```")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--cluster-size", type=int, default=10, help="nodes per group (= --nodes: uniform graph)")
    parser.add_argument("--degree", type=float, default=1.5, help="edges per node")
    parser.add_argument("--change", type=int, default=100, help="edge changes per step, half deletions")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--views", nargs="+", choices=sorted(VIEWS), default=["tc", "cc"])
    parser.add_argument("--cc", choices=sorted(CC_QUERIES), default="set", help="connected-components formulation")
    parser.add_argument("--duckdb-runs", type=int, default=3, help="DuckDB recomputations per step (median)")
    parser.add_argument("--check-every", type=int, default=1, help="compare with DuckDB every N steps (0: never)")
    parser.add_argument("--no-from-scratch", action="store_true", help="skip the from-scratch pipeline")
    parser.add_argument("--no-pydbsp", action="store_true")
    parser.add_argument("--pydbsp-nodes", type=int, default=None, help="graph size for pydbsp (default: --nodes)")
    parser.add_argument("--pydbsp-budget", type=float, default=300.0, help="seconds of pydbsp steps at most")
    parser.add_argument("--profile", action="store_true", help="cProfile dbspc's incremental steps")
    args = parser.parse_args()

    VIEWS["cc"] = CC_QUERIES[args.cc]
    started = time.perf_counter()
    w = make_workload(args.nodes, args.cluster_size, args.degree, args.steps, args.change, args.seed)
    print(f"command: {shlex.join(['.venv/bin/python', 'bench/recursion.py', *sys.argv[1:]])}")
    print(
        f"graph: {w.nodes:,} nodes in groups of {w.cluster}, {w.edges:,} edges; {args.steps} steps of "
        f"{args.change} edge changes (half deletions); cc: {args.cc}; seed {args.seed}; polars {pl.__version__}, "
        f"duckdb {duckdb.__version__}, {os.cpu_count()} cores\n",
        flush=True,
    )
    pydbsp_nodes = args.pydbsp_nodes or args.nodes
    check_steps = sorted({0, 1, 2, 3, args.steps})
    pydbsp: Pydbsp | None = None
    pydbsp_note = ""
    if "tc" in args.views and not args.no_pydbsp:
        python, pydbsp_note = pydbsp_python()
        if python is not None:
            small = w
            if pydbsp_nodes != args.nodes:
                small = make_workload(pydbsp_nodes, args.cluster_size, args.degree, args.steps, args.change, args.seed)
            print(f"pydbsp ({pydbsp_note}): loading {small.nodes:,} nodes ...", flush=True)
            pydbsp = Pydbsp(python, small, check_steps, args.pydbsp_budget)

    runs: dict[str, ViewRun] = {}
    for view in args.views:
        profile = cProfile.Profile() if args.profile else None
        same = view == "tc" and pydbsp is not None and pydbsp.nodes == args.nodes
        r = runs[view] = run_view(
            view,
            w,
            from_scratch=not args.no_from_scratch,
            duckdb_runs=args.duckdb_runs,
            check_every=args.check_every,
            keep=frozenset(check_steps) if same else frozenset(),
            profile=profile,
            alongside=pydbsp.step if same and pydbsp is not None else None,
        )
        print(
            f"{view}: load {r.load_s:.1f} s, step median {_f(_ms(r.step_s))} ms, DuckDB {_f(_ms(r.duckdb_s))} ms "
            f"({time.perf_counter() - started:.0f} s so far)",
            flush=True,
        )
        if profile is not None:
            print_profile(profile, view)
        if same and pydbsp is not None:
            pydbsp.finish(r)
    if pydbsp is not None and pydbsp.nodes != args.nodes:
        # a smaller graph for pydbsp: dbspc runs the same one, step by step beside it
        small = make_workload(pydbsp_nodes, args.cluster_size, args.degree, args.steps, args.change, args.seed)
        ours = run_view(
            "tc",
            small,
            from_scratch=False,
            duckdb_runs=0,
            check_every=0,
            keep=frozenset(check_steps),
            alongside=pydbsp.step,
        )
        pydbsp.finish(ours)

    print_main_table(runs, args.nodes)
    if pydbsp is not None:
        print_pydbsp(pydbsp)
    elif pydbsp_note:
        print(f"\npydbsp: {pydbsp_note}")
    print_iterations(runs, args.steps)
    print("\n### Correctness\n")
    for r in runs.values():
        status = "equal" if not r.mismatches else "; ".join(r.mismatches[:5])
        print(f"- {r.view}: dbspc's integrated output vs DuckDB after {r.checked} of {args.steps} steps: {status}")
    print(f"\ntotal bench time {time.perf_counter() - started:.0f} s")
    if any(r.mismatches for r in runs.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()

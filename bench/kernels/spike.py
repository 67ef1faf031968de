"""Kernel-technology spike: the current polars Trace vs numba vs Cython spine kernels.

One run, side by side, on this machine: numba JIT compile / cached load, Cython `pip install`
build time, per-call latency (median, p99) of insert, probe and grouped-sum update at state
sizes 1M and 10M rows with 1k and 100k-row batches, and the polars <-> numpy boundary cost.

    PYTHONPATH=$PWD .venv/bin/python bench/kernels/spike.py [--sizes 1000000 10000000] [--steps 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import polars as pl
import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from backends import build_c, load_c, load_nb  # noqa: E402
from spine import SEED, GroupSum, Run, Spine  # noqa: E402

from dbspc.compiler.types import SqlType  # noqa: E402
from dbspc.runtime.trace import Trace  # noqa: E402
from dbspc.runtime.zset import ZSet  # noqa: E402

NCOL = 3  # c0 = join key, c1 = unique id, c2 = amount


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return f"median {1e3 * statistics.median(xs):8.3f} ms  p99 {1e3 * p99:8.3f} ms"


class Clock:
    """Wall and process-CPU time of a call (the machine is shared: CPU time is the steadier cost;
    it counts every thread of this process, so polars' worker threads are included)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> Clock:
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cpu.append(time.process_time() - self._c)
        self.wall.append(time.perf_counter() - self._w)

    def __str__(self) -> str:
        return f"wall {stats(self.wall)}; cpu {stats(self.cpu)}"


# -- compile / build costs ---------------------------------------------------------------

_WARM = """
import sys, time; t = time.perf_counter()
sys.path.insert(0, {here!r})
import numpy as np
from spine import Spine, GroupSum
import spine_nb as K
rng = np.random.default_rng(0)
s = Spine(K, 3, 1)
for _ in range(3):
    s.insert_batch(rng.integers(0, 9, (3, 100)), np.ones((3, 100), np.uint8), np.ones(100, np.int64))
s.probe(np.arange(5).reshape(1, -1), np.ones((1, 5), np.uint8))
GroupSum(K, 1).update(rng.integers(0, 9, (3, 100)), np.ones((3, 100), np.uint8), np.ones(100, np.int64), 2)
print(time.perf_counter() - t)
"""


def numba_compile_times() -> tuple[float, float]:
    """(first use with an empty cache, fresh process with the on-disk cache), whole process work."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        code = _WARM.format(here=str(HERE))
        first = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                     check=True).stdout)
        cached = float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                      check=True).stdout)
    return first, cached


# -- data -------------------------------------------------------------------------------


def base_data(rng: np.random.Generator, n: int, keys: int) -> np.ndarray:
    vals = np.empty((NCOL, n), np.int64)
    vals[0] = rng.integers(0, keys, n)
    vals[1] = np.arange(n)
    vals[2] = rng.integers(1, 100_000, n)
    return vals


def bulk_run(K: ModuleType, vals: np.ndarray) -> Run:
    """The initial state as one sorted run (rows are distinct: c1 is unique)."""
    valid = np.ones(vals.shape, np.uint8)
    u = vals.view(np.uint64)
    kh = K.hash_cols(u, valid, 0, 1, SEED)
    rh = K.hash_cols(u, valid, 0, NCOL, SEED)
    order = np.lexsort((rh, kh))
    return Run(kh[order], rh[order], np.ascontiguousarray(vals[:, order]), valid, np.ones(vals.shape[1], np.int64))


def steps_data(rng: np.random.Generator, base: np.ndarray, keys: int, batch: int, steps: int) -> list[np.ndarray]:
    """Each step: half new rows, half deletes of present base rows (weights +1 / -1)."""
    out = []
    n = base.shape[1]
    fresh = n
    for _ in range(steps):
        half = batch // 2
        ins = base_data(rng, half, keys)
        ins[1] = np.arange(fresh, fresh + half)
        fresh += half
        dele = base[:, rng.choice(n, batch - half, replace=False)]
        vals = np.ascontiguousarray(np.concatenate([ins, dele], axis=1))
        w = np.concatenate([np.ones(half, np.int64), -np.ones(batch - half, np.int64)])
        out.append(np.concatenate([vals, w[None, :]]))
    return out


def to_frame(vals: np.ndarray, w: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame({**{f"c{c}": vals[c] for c in range(vals.shape[0])}, "w": w})


def warm_up(K: ModuleType) -> None:
    """Exercise every kernel signature (merges in progress, strided run slices) before timing."""
    rng = np.random.default_rng(0)
    spine, agg = Spine(K, NCOL, 1, fuel=1), GroupSum(K, 1, fuel=1)
    for _ in range(20):
        vals = rng.integers(0, 50, (NCOL, 100))
        valid, w = np.ones(vals.shape, np.uint8), np.ones(100, np.int64)
        spine.insert_batch(vals, valid, w)
        spine.probe(vals[:1].copy(), valid[:1].copy())
        agg.update(vals, valid, w, 2)


# -- latency ----------------------------------------------------------------------------


def bench_size(n: int, batches: list[tuple[int, int]], backends: dict[str, ModuleType], polars_too: bool) -> None:
    rng = np.random.default_rng(n)
    keys = max(1, n // 10)  # ~10 stored rows per join key
    base = base_data(rng, n, keys)
    t = time.perf_counter()
    run = bulk_run(backends["numba"], base)
    print(f"\n== state {n:,} rows ({keys:,} keys); bulk run built in {time.perf_counter() - t:.1f} s", flush=True)
    trace = None
    if polars_too:
        t = time.perf_counter()
        trace = Trace([SqlType("BIGINT")] * NCOL, (0,))
        trace.insert(ZSet(to_frame(base, np.ones(n, np.int64)), (SqlType("BIGINT"),) * NCOL))
        print(f"   polars Trace loaded in {time.perf_counter() - t:.1f} s", flush=True)
    for batch, steps in batches:
        data = steps_data(rng, base, keys, batch, steps)
        probes = [np.ascontiguousarray(rng.integers(0, keys, (1, batch))) for _ in range(steps)]
        print(f"-- batch {batch:,} rows x {steps} steps (half inserts, half deletes); probe {batch:,} keys", flush=True)
        for name, K in backends.items():
            spine = Spine(K, NCOL, 1)
            spine.insert_run(run)
            agg = GroupSum(K, 1)
            # grouped state: SUM(c2), COUNT(*) per c0 over the base rows
            agg.state.insert_run(_agg_base(K, base))
            ins, pr, ag = Clock(), Clock(), Clock()
            for d, p in zip(data, probes, strict=True):
                vals, w = d[:NCOL], d[NCOL]
                valid = np.ones(vals.shape, np.uint8)
                with ins:
                    spine.insert_batch(vals, valid, w)
                with pr:
                    spine.probe(p, np.ones(p.shape, np.uint8))
                with ag:
                    agg.update(vals, valid, w, 2)
            print(f"   {name:7s} insert  {ins}\n   {name:7s} probe   {pr}\n   {name:7s} groupby {ag}"
                  f"\n   {name:7s} runs {len(spine.runs())}, forced merges {spine.forced}", flush=True)
        if trace is not None:
            tr = trace
            ins, pr = Clock(), Clock()
            for d, p in zip(data, probes, strict=True):
                frame = to_frame(d[:NCOL], d[NCOL])
                pf = pl.DataFrame({"k": p[0]})
                with ins:
                    tr.insert(ZSet(frame, (SqlType("BIGINT"),) * NCOL))
                with pr:
                    tr.lookup(pf, ["k"])
            print(f"   polars  insert  {ins}\n   polars  probe   {pr}\n   polars  runs {tr.run_count}", flush=True)


def _agg_base(K: ModuleType, base: np.ndarray) -> Run:
    df = pl.DataFrame({"k": base[0], "v": base[2]}).group_by("k").agg(pl.col("v").sum(), pl.len().cast(pl.Int64))
    vals = np.ascontiguousarray(np.stack([df["k"].to_numpy(), df["v"].to_numpy(), df["len"].to_numpy()]))
    valid = np.ones(vals.shape, np.uint8)
    u = vals.view(np.uint64)
    kh, rh = K.hash_cols(u, valid, 0, 1, SEED), K.hash_cols(u, valid, 0, 3, SEED)
    order = np.lexsort((rh, kh))
    return Run(kh[order], rh[order], np.ascontiguousarray(vals[:, order]), valid, np.ones(vals.shape[1], np.int64))


# -- boundary -----------------------------------------------------------------------------


def boundary(reps: int = 300) -> None:
    import datetime as dt
    import decimal

    rng = np.random.default_rng(7)
    n = 1000
    words = np.array([f"customer-{i}" for i in range(5000)])
    frame = pl.DataFrame({
        "id": rng.integers(0, 1 << 40, n),
        "k": pl.Series(rng.integers(0, 100, n), dtype=pl.Int32).set(pl.Series(rng.random(n) < 0.05), None),
        "amt": pl.Series([decimal.Decimal(int(x)) / 100 for x in rng.integers(0, 10**6, n)], dtype=pl.Decimal(10, 2)),
        "big": pl.Series([decimal.Decimal(int(x)) / 100 for x in rng.integers(0, 10**6, n)], dtype=pl.Decimal(38, 2)),
        "d": pl.Series([dt.date(2020, 1, 1) + dt.timedelta(days=int(x)) for x in rng.integers(0, 2000, n)]),
        "s": pl.Series(words[rng.integers(0, 5000, n)]).set(pl.Series(rng.random(n) < 0.05), None),
        "w": np.ones(n, np.int64),
    })

    def to_numpy(f: pl.DataFrame) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name in ("id", "k", "d", "w"):
            s = f[name].to_physical()
            out[name] = s.fill_null(0).to_numpy().astype(np.int64, copy=False)
            if s.null_count():
                out[name + "$valid"] = s.is_not_null().to_numpy()
        out["amt"] = f["amt"].to_physical().cast(pl.Int64).to_numpy()  # DECIMAL(p<=18): scaled int64
        # DECIMAL(38): the Arrow decimal128 buffer viewed as (lo, hi) int64 pairs, no copy
        big = f["big"].to_arrow()
        out["big"] = np.frombuffer(big.buffers()[1], np.int64, 2 * len(big)).reshape(-1, 2)
        s = f["s"]
        out["s$hash"] = s.hash(SEED).to_numpy()  # strings enter kernels as hashes (+ row index)
        out["s$valid"] = s.is_not_null().to_numpy()
        return out

    def from_numpy(cols: dict[str, np.ndarray], idx: np.ndarray) -> pl.DataFrame:
        # rows picked by a kernel (idx) come back as numpy columns; strings by gathering the source
        valid = pl.Series(cols["k$valid"][idx])
        big = cols["big"][idx]
        big_arr = pa.Array.from_buffers(pa.decimal128(38, 2), len(idx), [None, pa.py_buffer(big.tobytes())])
        return pl.DataFrame({
            "id": cols["id"][idx],
            "k": pl.Series(cols["k"][idx]).cast(pl.Int32).zip_with(valid, pl.Series([None], dtype=pl.Int32)),
            "amt": pl.Series(cols["amt"][idx]).cast(pl.Decimal(10, 2)) / 100,
            "big": pl.from_arrow(big_arr),
            "d": pl.Series(cols["d"][idx]).cast(pl.Int32).cast(pl.Date),
            "s": frame["s"].gather(idx),
            "w": cols["w"][idx],
        })

    idx = np.arange(n)
    cols = to_numpy(frame)
    back = from_numpy(cols, idx)
    assert back["big"].to_list() == frame["big"].to_list() and back["s"].to_list() == frame["s"].to_list()
    assert back["d"].to_list() == frame["d"].to_list() and back["k"].to_list() == frame["k"].to_list()
    t_in, t_out, t_str = Clock(), Clock(), Clock()
    for _ in range(reps):
        with t_in:
            cols = to_numpy(frame)
        with t_out:
            from_numpy(cols, idx)
        with t_str:
            frame["s"].cast(pl.Categorical).to_physical().to_numpy()  # dictionary codes alternative
    print(f"\n== boundary, 1k rows x 7 columns (int64, int32 w/ NULLs, DECIMAL(10,2), DECIMAL(38,2), DATE,"
          f" STRING w/ NULLs, w)\n   polars -> numpy  {t_in}\n   numpy -> polars  {t_out}"
          f"\n   STRING -> dictionary codes (Categorical)  {t_str}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--steps", type=int, default=300, help="steps with 1k-row batches (100k batches: steps/15)")
    ap.add_argument("--no-build", action="store_true", help="skip timing the Cython pip install")
    args = ap.parse_args()
    print(f"cpus {os.cpu_count()}, numpy {np.__version__}, polars {pl.__version__}", flush=True)
    if not args.no_build:
        print(f"Cython pip install (build isolation, cythonize + gcc -O3): {build_c(force=True):.1f} s", flush=True)
    first, cached = numba_compile_times()
    print(f"numba warm-up workload, fresh process: empty cache (JIT) {first:.2f} s, on-disk cache {cached:.2f} s",
          flush=True)
    t = time.perf_counter()
    backends = {"numba": load_nb(), "cython": load_c()}
    print(f"import both backends in this process: {time.perf_counter() - t:.2f} s", flush=True)
    t = time.perf_counter()
    for K in backends.values():
        warm_up(K)
    print(f"warm-up (numba compiles the strided-array signatures, from its cache after the first run):"
          f" {time.perf_counter() - t:.2f} s", flush=True)
    boundary()
    for n in args.sizes:
        bench_size(n, [(1000, args.steps), (100_000, max(5, args.steps // 15))], backends, polars_too=True)


if __name__ == "__main__":
    main()

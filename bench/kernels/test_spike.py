"""The spike's kernels (numba and Cython) against a plain numpy/polars reference, with deletes.

    PYTHONPATH=$PWD .venv/bin/python -m pytest bench/kernels/test_spike.py -q
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from backends import load_c, load_nb
from spine import SEED, GroupSum, Run, Spine, make_run

NCOL, NK = 3, 2


@pytest.fixture(scope="module", params=["numba", "cython"])
def K(request: pytest.FixtureRequest) -> ModuleType:
    return load_nb() if request.param == "numba" else load_c()


def _batch(rng: np.random.Generator, n: int, domain: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    vals = rng.integers(-domain, domain, (NCOL, n)).astype(np.int64)
    valid = (rng.random((NCOL, n)) > 0.1).astype(np.uint8)
    vals[valid == 0] = 0  # NULL slots hold 0
    w = rng.integers(-2, 3, n).astype(np.int64)
    return vals, valid, w


def _frame(vals: np.ndarray, valid: np.ndarray, w: np.ndarray) -> pl.DataFrame:
    cols = {f"c{c}": pl.Series(vals[c]).set(pl.Series(valid[c] == 0), None) for c in range(vals.shape[0])}
    return pl.DataFrame({**cols, "w": w})


def _consolidated(df: pl.DataFrame) -> list[tuple]:
    keys = [c for c in df.columns if c != "w"]
    out = df.group_by(keys).agg(pl.col("w").sum()).filter(pl.col("w") != 0)
    return sorted(out.rows(), key=repr)


def _run_rows(r: Run) -> list[tuple]:
    return _consolidated(_frame(r.vals, r.valid, r.w))


def test_hash_null_aware_and_backends_agree() -> None:
    nb, c = load_nb(), load_c()
    rng = np.random.default_rng(1)
    vals, valid, _ = _batch(rng, 500)
    u = vals.view(np.uint64)
    assert np.array_equal(nb.hash_cols(u, valid, 0, NK, SEED), c.hash_cols(u, valid, 0, NK, SEED))
    z = np.zeros((1, 2), np.int64)
    h = nb.hash_cols(z.view(np.uint64), np.array([[1, 0]], np.uint8), 0, 1, SEED)
    assert h[0] != h[1]  # 0 and NULL differ
    assert not np.array_equal(h, nb.hash_cols(z.view(np.uint64), np.array([[1, 0]], np.uint8), 0, 1, SEED + 1))


def test_consolidate(K: ModuleType) -> None:
    rng = np.random.default_rng(2)
    vals, valid, w = _batch(rng, 2000, domain=3)
    run = make_run(K, vals, valid, w, NK)
    assert _run_rows(run) == _consolidated(_frame(vals, valid, w))
    assert len(run) == len(_run_rows(run)) and (run.w != 0).all()
    assert (np.diff(run.kh.astype(np.float64)) >= 0).all() or (run.kh[1:] >= run.kh[:-1]).all()


def _spine_and_reference(K: ModuleType, fuel: int) -> tuple[Spine, pl.DataFrame, np.random.Generator]:
    rng = np.random.default_rng(3)
    spine = Spine(K, NCOL, NK, fuel=fuel)
    frames = []
    for _ in range(60):
        vals, valid, w = _batch(rng, int(rng.integers(1, 300)))
        if frames and rng.random() < 0.5:  # delete rows inserted before
            prev = pl.concat(frames)
            sample = prev.sample(min(prev.height, 100), seed=int(rng.integers(1 << 30)))
            vals = np.stack([sample[f"c{c}"].fill_null(0).to_numpy() for c in range(NCOL)]).astype(np.int64)
            valid = np.stack([sample[f"c{c}"].is_not_null().to_numpy() for c in range(NCOL)]).astype(np.uint8)
            w = -sample["w"].to_numpy().astype(np.int64)
        spine.insert_batch(np.ascontiguousarray(vals), np.ascontiguousarray(valid), w)
        frames.append(_frame(vals, valid, w))
    return spine, pl.concat(frames), rng


@pytest.mark.parametrize("fuel", [1, 4, 1000])
def test_spine_insert_and_probe(K: ModuleType, fuel: int) -> None:
    spine, ref, rng = _spine_and_reference(K, fuel)
    assert _consolidated(pl.concat([_frame(r.vals, r.valid, r.w) for r in spine.runs()])) == _consolidated(ref)
    pvals, pvalid, _ = _batch(rng, 40)
    pvals, pvalid = np.ascontiguousarray(pvals[:NK]), np.ascontiguousarray(pvalid[:NK])
    got = spine.probe(pvals, pvalid)
    keys = _frame(pvals, pvalid, np.ones(40, np.int64)).select("c0", "c1").unique()
    want = ref.join(keys, on=["c0", "c1"], how="semi", nulls_equal=True)
    assert _run_rows(got) == _consolidated(want)
    assert len(got) == len(_run_rows(got))  # consolidated across runs


def test_group_sum_update(K: ModuleType) -> None:
    rng = np.random.default_rng(4)
    agg = GroupSum(K, nk=1, fuel=2)
    frames = []
    view: list[pl.DataFrame] = []
    for _ in range(40):
        vals, valid, _ = _batch(rng, int(rng.integers(1, 200)))
        w = np.ones(vals.shape[1], np.int64)
        if frames and rng.random() < 0.5:
            prev = pl.concat(frames).group_by("c0", "c1", "c2").agg(pl.col("w").sum()).filter(pl.col("w") > 0)
            sample = prev.sample(min(prev.height, 50), seed=int(rng.integers(1 << 30)))
            vals = np.stack([sample[f"c{c}"].fill_null(0).to_numpy() for c in range(NCOL)]).astype(np.int64)
            valid = np.stack([sample[f"c{c}"].is_not_null().to_numpy() for c in range(NCOL)]).astype(np.uint8)
            w = -np.ones(sample.height, np.int64)
        change = agg.update(np.ascontiguousarray(vals), np.ascontiguousarray(valid), w, vcol=2)
        frames.append(_frame(vals, valid, w))
        view.append(_frame(change.vals, change.valid, change.w))
    data = pl.concat(frames)
    want = (data.group_by("c0").agg((pl.col("c2").fill_null(0) * pl.col("w")).sum().alias("c1"),
                                    pl.col("w").sum().alias("c2"))
            .filter(pl.col("c2") != 0).with_columns(w=pl.lit(1, pl.Int64)))
    assert _consolidated(pl.concat(view)) == _consolidated(want)

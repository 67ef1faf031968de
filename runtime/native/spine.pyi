# Signatures of the compiled kernels in spine.pyx (for mypy and readers).
import numpy as np

def sort_groups(kh: np.ndarray, rh: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def match_hashes(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def merge_plan(
    akh: np.ndarray, arh: np.ndarray, bkh: np.ndarray, brh: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]: ...
FENCE_STEP: int

def fences(h: np.ndarray) -> np.ndarray: ...
def probe_fenced(runs: list[np.ndarray], run_fences: list[np.ndarray], wanted: np.ndarray) -> list[np.ndarray]: ...
def probe_pairs(
    runs: list[np.ndarray], run_rows: list[np.ndarray], run_fences: list[np.ndarray], wkh: np.ndarray, wrh: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]: ...
def held_weights(
    runs: list[np.ndarray],
    run_rows: list[np.ndarray],
    run_fences: list[np.ndarray],
    run_columns: list[list[np.ndarray]],
    run_weights: list[np.ndarray],
    wkh: np.ndarray,
    wrh: np.ndarray,
    order: np.ndarray,
    columns: list[np.ndarray],
) -> np.ndarray | None: ...
def merge_rows(
    akh: np.ndarray,
    arh: np.ndarray,
    bkh: np.ndarray,
    brh: np.ndarray,
    a_columns: list[np.ndarray],
    b_columns: list[np.ndarray],
    aw: np.ndarray,
    bw: np.ndarray,
    one_hash: bool,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray] | None: ...
def gather_matches(
    runs: list[np.ndarray],
    run_fences: list[np.ndarray],
    run_columns: list[list[np.ndarray]],
    run_weights: list[np.ndarray],
    wanted: np.ndarray,
    order: np.ndarray,
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]: ...
def sum_groups(
    order: np.ndarray, starts: np.ndarray, columns: list[np.ndarray], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None: ...

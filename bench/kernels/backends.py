"""Loads the two kernel backends of the spike: numba (JIT, on-disk cache) and Cython (built by pip)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
BUILD = HERE / "_build"


def build_c(force: bool = False) -> float | None:
    """`pip install` the Cython package into bench/kernels/_build; returns the seconds taken
    (None if it was already built)."""
    if not force and any((BUILD / "cspine").glob("spine_c*.so")):
        return None
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", str(BUILD),
                    str(HERE / "cspine")], check=True)
    return time.perf_counter() - t


def load_c() -> ModuleType:
    build_c()
    if str(BUILD) not in sys.path:
        sys.path.insert(0, str(BUILD))
    return importlib.import_module("cspine.spine_c")


def load_nb() -> ModuleType:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module("spine_nb")

"""Compiled kernels (Cython, built by `pip install`; see docs/kernels.md)."""

try:
    from . import iterscope, libm, rowhash, spine
except ImportError as e:  # a source checkout whose extension was never built
    raise ImportError(
        "dbspc's compiled kernels (runtime/native/*.pyx) are not built: run `make setup` or `pip install -e .`"
    ) from e

__all__ = ["iterscope", "libm", "rowhash", "spine"]

# Signatures of the compiled kernels in libm.pyx (for mypy and readers).
import numpy as np

UNARY: dict[str, int]
BINARY: dict[str, int]

def unary(name: str, x: np.ndarray) -> np.ndarray: ...
def binary(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray: ...

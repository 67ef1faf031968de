"""The compiled kernels (runtime/native/*.pyx), built by `pip install`; the rest of the
package is declared in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

NATIVE = ["extrema", "groupsums", "iterscope", "libm", "rowhash", "spine"]

setup(
    ext_modules=cythonize(
        [
            Extension(
                f"dbspc.runtime.native.{name}",
                [f"runtime/native/{name}.pyx"],
                include_dirs=["runtime/native"],
                extra_compile_args=["-O3"],
            )
            for name in NATIVE
        ],
        language_level=3,
    ),
)

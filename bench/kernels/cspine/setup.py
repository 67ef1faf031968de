"""Build of the Cython spine kernels (spike): `pip install --target bench/kernels/_build bench/kernels/cspine`."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="dbspc-cspine",
    version="0.0.1",
    packages=["cspine"],
    package_dir={"cspine": "."},
    ext_modules=cythonize(
        [Extension("cspine.spine_c", ["spine_c.pyx"], extra_compile_args=["-O3", "-march=x86-64-v2"])],
        language_level=3,
    ),
)

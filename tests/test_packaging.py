"""`pip install .` adds one import name, dbspc: the wheel holds nothing else at its top
level, its compiled kernels included, and the public API imports from it alone (not
from the source checkout)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_wheel_installs_one_import_name(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(REPO), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("dbspc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    name, version = wheel.name.split("-")[:2]
    assert {n.split("/")[0] for n in names} == {"dbspc", f"{name}-{version}.dist-info"}
    assert "dbspc/runtime/spark/spark_pipeline.py" in names and "dbspc/compiler/compile.py" in names
    # the compiled kernels are built into the wheel
    assert any(n.startswith("dbspc/runtime/native/spine.") and n.endswith(".so") for n in names), names
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "dbspc = dbspc.cli:main" in entry
    # Unpacked (as pip installs it), the API comes from the wheel alone.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import sys, dbspc; from dbspc import SparkPipeline, Pipeline; "
        "assert dbspc.__file__.startswith(sys.argv[1]), dbspc.__file__; "
        "assert not {'compiler', 'runtime', 'slt', 'cli'} & set(sys.modules); print('ok')"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); exec({code!r})", str(site)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr

"""Whole-batch kernels of the DBSP operators; each module registers the operators it
implements in runtime/registry.py, so importing this package fills the table."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

"""dbspc: SQL views compiled to incremental DBSP circuits, maintained over changes.

    from dbspc import SparkPipeline          # views inside a PySpark job (docs/spark.md)
    from dbspc import Pipeline, ZSet         # the engine-neutral API (runtime/pipeline.py)

The subpackages are `dbspc.compiler` (SQL to circuits), `dbspc.runtime` (the executor,
the refresh protocol and the Spark driver) and `dbspc.slt` (the sqllogictest runner);
`dbspc.cli` is the `dbspc` command. Names are imported on first use, so `import dbspc`
(and the command line) does not pay for pyspark until a Spark name is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it
_EXPORTS = {
    "SparkPipeline": "dbspc.runtime.spark.spark_pipeline",
    "DeclarativePipeline": "dbspc.runtime.spark.declarative",
    "RefreshResult": "dbspc.runtime.refresh.job",
    "ChangeTable": "dbspc.runtime.refresh.sources",
    "AppendTable": "dbspc.runtime.refresh.sources",
    "PlainTable": "dbspc.runtime.refresh.sources",
    "read_view": "dbspc.runtime.spark.readers",
    "read_changes": "dbspc.runtime.spark.readers",
    "local_session": "dbspc.runtime.spark.session",
    "Pipeline": "dbspc.runtime.pipeline",
    "ZSet": "dbspc.runtime.zset",
    "DbspcError": "dbspc.compiler.errors",
    "SqlError": "dbspc.compiler.errors",
    "UnsupportedSql": "dbspc.compiler.errors",
    "InputError": "dbspc.compiler.errors",
    "UsageError": "dbspc.compiler.errors",
    "RuntimeSqlError": "dbspc.compiler.errors",
    "SparkExtension": "dbspc.compiler.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dbspc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])

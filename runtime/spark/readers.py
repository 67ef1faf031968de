"""Spark DataFrames over a job's committed outputs, for the job itself and any reader.

After each commit the job writes `<output>/_published.json`: the committed refresh id
and, per view, its column names and types, its current version directory and its
change log directory (runtime/refresh/sinks.py). A version directory is a plain
parquet table, so `spark.read.parquet(location)` reads it as it is; these readers add
the lookup of the current version, for a reader in another Spark application that
follows a running job without the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dbspc.compiler.errors import UsageError
from dbspc.runtime.refresh.schema import parse_type, spark_ddl_type
from dbspc.runtime.refresh.sinks import CHANGE_TYPE, COMMIT_TIMESTAMP, COMMIT_VERSION, PUBLISHED
from dbspc.runtime.refresh.storage import at as storage_at


def contents(spark: SparkSession, root: str, view: Mapping[str, Any], name: str) -> DataFrame:
    """The view's committed table: the files of its current version, as they are."""
    if view.get("version") is None:
        return spark.createDataFrame([], schema(view, name))
    # its schema is known: Spark need not run a job to read it from the files' footers
    return spark.read.schema(schema(view, name)).parquet(f"{root}/{view['version']}")


def changes(spark: SparkSession, root: str, view: Mapping[str, Any], name: str, refresh_id: int) -> DataFrame:
    """The view's change log up to the committed refresh: the view's columns plus
    `_change_type`, `_commit_version` and `_commit_timestamp`."""
    if not view.get("change_log"):
        raise UsageError(f"view '{name}' has no change log; register the job with change_log=True")
    log = spark.read.schema(schema(view, name, change_log=True)).parquet(f"{root}/{view['changes']}")
    return log.where(F.col(COMMIT_VERSION) <= F.lit(refresh_id))


def read_view(spark: SparkSession, output: str | Path, view: str) -> DataFrame:
    """The committed contents of `view` of the job writing to `output`."""
    root, record = _published(spark, output)
    return contents(spark, root, _view(record, view, root), view)


def read_changes(spark: SparkSession, output: str | Path, view: str) -> DataFrame:
    """The committed change log of `view` of the job writing to `output`."""
    root, record = _published(spark, output)
    return changes(spark, root, _view(record, view, root), view, int(record["refresh_id"]))


def _published(spark: SparkSession, output: str | Path) -> tuple[str, dict[str, Any]]:
    storage = storage_at(str(output).rstrip("/"), spark)
    if not storage.exists(PUBLISHED):
        raise UsageError(
            f"{storage.uri()} holds no published dbspc outputs (no {PUBLISHED}); has the job refreshed yet?"
        )
    return storage.uri(), json.loads(storage.read_bytes(PUBLISHED))


def _view(record: Mapping[str, Any], view: str, root: str) -> Mapping[str, Any]:
    views = record["views"]
    if view.lower() not in views:
        raise UsageError(f"no view '{view}' in {root}; it has {', '.join(sorted(views))}")
    found: Mapping[str, Any] = views[view.lower()]
    return found


def schema(view: Mapping[str, Any], name: str, change_log: bool = False) -> T.StructType:
    """A view's Spark schema from its published record (with the change-feed columns)."""
    types = [parse_type(t) for t in view["types"]]
    fields = [
        T.StructField(n, T._parse_datatype_string(spark_ddl_type(t, f"view '{name}' column {n}")))
        for n, t in zip(view["columns"], types, strict=True)
    ]
    if change_log:
        fields += [
            T.StructField(CHANGE_TYPE, T.StringType()),
            T.StructField(COMMIT_VERSION, T.LongType()),
            T.StructField(COMMIT_TIMESTAMP, T.TimestampType()),
        ]
    return T.StructType(fields)

"""Spark DataFrames over a job's committed outputs, for the job itself and any reader.

After each commit the job writes `<output>/_published.json`: the committed refresh id
and, per view, its column names and types and its current run files. Everything a
reader needs is there, and it only ever names files of a committed refresh, so a
reader in another Spark application can follow a running job with `read_view`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from compiler.errors import UsageError
from runtime.refresh import files
from runtime.refresh.sinks import PUBLISHED, REFRESH_ID
from runtime.spark.spark_types import parse_type, spark_schema
from runtime.zset import WEIGHT, col_name

# Names of the meta columns of a change-log DataFrame.
CHANGE_WEIGHT = "weight"
CHANGE_REFRESH = "refresh_id"


def contents(spark: SparkSession, root: Path, view: Mapping[str, Any], name: str) -> DataFrame:
    """The view's contents: runs summed by row, each row repeated by its weight."""
    names, where = list(view["columns"]), f"view '{name}'"
    schema = _schema(view, where)
    paths = [str(root / r["file"]) for r in view["runs"]]
    if not paths:
        rows = spark.createDataFrame([], schema)
    else:
        rows = spark.read.schema(schema).parquet(*paths)
        if len(paths) > 1:
            keys = [col_name(i) for i in range(len(names))]
            rows = rows.groupBy(*keys).agg(F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) > 0)
    repeat = F.explode(F.sequence(F.lit(1).cast("bigint"), F.col(WEIGHT)))
    expanded = rows.select(*_named(names), repeat.alias("__copy"))
    return expanded.drop("__copy")


def changes(spark: SparkSession, root: Path, view: Mapping[str, Any], name: str, refresh_id: int) -> DataFrame:
    """The view's change log up to the committed refresh: rows, weight, refresh id."""
    if not view.get("change_log"):
        raise UsageError(f"view '{name}' has no change log; register the job with change_log=True")
    schema = _schema(view, f"view '{name}'") + f", {REFRESH_ID} BIGINT"
    directory = root / str(view["changes"])
    directory.mkdir(parents=True, exist_ok=True)
    log = spark.read.schema(schema).parquet(str(directory)).where(F.col(REFRESH_ID) <= F.lit(refresh_id))
    names = list(view["columns"])
    return log.select(*_named(names), F.col(WEIGHT).alias(CHANGE_WEIGHT), F.col(REFRESH_ID).alias(CHANGE_REFRESH))


def read_view(spark: SparkSession, output: str | Path, view: str) -> DataFrame:
    """The committed contents of `view` of the job writing to `output`."""
    root, record = _published(output)
    return contents(spark, root, _view(record, view, root), view)


def read_changes(spark: SparkSession, output: str | Path, view: str) -> DataFrame:
    """The committed change log of `view` of the job writing to `output`."""
    root, record = _published(output)
    return changes(spark, root, _view(record, view, root), view, int(record["refresh_id"]))


def _published(output: str | Path) -> tuple[Path, dict[str, Any]]:
    root = Path(output)
    path = root / PUBLISHED
    if not path.exists():
        raise UsageError(f"{root} holds no published dbspc outputs (no {PUBLISHED}); has the job refreshed yet?")
    return root, files.read_json(path)


def _view(record: Mapping[str, Any], view: str, root: Path) -> Mapping[str, Any]:
    views = record["views"]
    if view.lower() not in views:
        raise UsageError(f"no view '{view}' in {root}; it has {', '.join(sorted(views))}")
    found: Mapping[str, Any] = views[view.lower()]
    return found


def _schema(view: Mapping[str, Any], where: str) -> str:
    types = [parse_type(t) for t in view["types"]]
    names = [col_name(i) for i in range(len(types))]
    return spark_schema(names, types, where) + f", {WEIGHT} BIGINT"


def _named(names: list[str]) -> list[SparkColumn]:
    return [F.col(col_name(i)).alias(n) for i, n in enumerate(names)]

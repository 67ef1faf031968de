"""dbspc inside a PySpark job: views over Spark tables, refreshed incrementally,
written back as Spark-readable tables and checkpointed exactly once (docs/spark.md)."""

from dbspc.runtime.refresh.job import RefreshResult
from dbspc.runtime.refresh.sources import AppendTable, ChangeTable, PlainTable
from dbspc.runtime.spark.readers import read_changes, read_view
from dbspc.runtime.spark.session import local_session
from dbspc.runtime.spark.spark_pipeline import SparkPipeline

__all__ = [
    "AppendTable",
    "ChangeTable",
    "PlainTable",
    "RefreshResult",
    "SparkPipeline",
    "local_session",
    "read_changes",
    "read_view",
]

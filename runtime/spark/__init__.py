"""dbspc inside a PySpark job: views over Spark tables, refreshed incrementally,
written back as Spark-readable tables and checkpointed exactly once (docs/spark.md)."""

from runtime.refresh.job import RefreshResult
from runtime.refresh.sources import AppendTable, ChangeTable, PlainTable
from runtime.spark.readers import read_changes, read_view
from runtime.spark.session import local_session
from runtime.spark.spark_pipeline import SparkPipeline

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

"""A local SparkSession with the settings dbspc's demo, benchmarks and tests use.

Local mode on two cores, bound to 127.0.0.1, no UI and few shuffle partitions: small
jobs are dominated by per-task overhead, and the default 200 partitions would make
every aggregation of a few thousand rows take a second. Times are UTC so that TIMESTAMP
values print the same everywhere. With `metastore`, the catalog is a Hive metastore kept
(in Derby) in that directory, so databases and tables outlive the session.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession


def local_session(
    app: str = "dbspc",
    warehouse: str | Path | None = None,
    cores: int = 2,
    metastore: str | Path | None = None,
) -> SparkSession:
    # distributed pipelines run dbspc in Spark's Python workers: this interpreter
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app)
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .config("spark.sql.session.timeZone", "UTC")
    )
    if warehouse is not None:
        builder = builder.config("spark.sql.warehouse.dir", str(Path(warehouse).resolve()))
    if metastore is not None:
        home = Path(metastore).resolve()
        url = f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true"
        builder = (
            builder.enableHiveSupport()
            .config("spark.hadoop.javax.jdo.option.ConnectionURL", url)
            .config("spark.driver.extraJavaOptions", f"-Dderby.stream.error.file={home / 'derby.log'}")
        )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)
    return session

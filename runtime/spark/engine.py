"""The Spark engine: Spark tables as the sources of the refresh layer.

It implements runtime/refresh/engine.py's protocol: schemas as Arrow (mapped from
Spark's types by catalog.py), batches through Arrow (`DataFrame.toArrow()`), never row
by row, and the checks and snapshot diffs as Spark queries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from py4j.protocol import Py4JError
from pyspark.sql import Column as SparkColumn
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from dbspc.compiler.errors import UsageError
from dbspc.runtime.refresh.sources import HASH, combine
from dbspc.runtime.spark.spark_types import arrow_schema, quote
from dbspc.runtime.zset import WEIGHT, col_name


class SparkEngine:
    """Sources are Spark tables or temporary views of one SparkSession.

    `refresh_sources` re-lists a source's files before each read (REFRESH TABLE): a
    file-based table written by another process is otherwise read from Spark's cached
    file listing and new batches stay invisible.
    """

    def __init__(self, spark: SparkSession, refresh_sources: bool = True) -> None:
        self.spark = spark
        self.refresh_sources = refresh_sources

    def _table(self, source: str) -> DataFrame:
        return self.spark.table(source)

    def schema(self, source: str, table: str) -> pa.Schema:
        if not self.spark.catalog.tableExists(source):
            named = f"'{source}'" if source == table else f"'{source}' (the source of table '{table}')"
            raise UsageError(
                f"Spark table {named} does not exist in the session's catalog; create it (or its temporary "
                "view) before registering views over it, or name an existing table with source="
            )
        if self.refresh_sources:
            self.spark.catalog.refreshTable(source)
        return arrow_schema(self._table(source).schema, table)

    def read_after(
        self,
        source: str,
        select: Sequence[tuple[str, str]],
        offset: str,
        after: int | None,
        within: Sequence[str] | None = None,
    ) -> pa.Table:
        return _arrow(self.changes_after(source, select, offset, after, within))

    def changes_after(
        self,
        source: str,
        select: Sequence[tuple[str, str]],
        offset: str,
        after: int | None,
        within: Sequence[str] | None = None,
    ) -> DataFrame:
        """The rows above offset `after`, as `select` names them, with their HASH. Read
        into the driver by `read_after`; in distributed mode, by the tasks that send
        them to their buckets, which also find their count, top offset and hash sum.

        With `within` (the files that hold every such row), a source that is a plain
        parquet relation is read from those files alone: a change table's scan then
        costs the new batch's files, not every file's footer and row-group statistics."""
        df = self._table(source)
        narrowed = None if within is None else _narrowed(self.spark, df, within)
        df = df if narrowed is None else narrowed
        off = F.col(quote(offset))
        if after is not None:
            # NULL offsets are read too, so that they are reported instead of skipped.
            df = df.where((off > F.lit(after)) | off.isNull())
        return df.select(*[F.col(quote(src)).alias(dst) for src, dst in select], _hash([s for s, _ in select]))

    def summary(
        self, source: str, columns: Sequence[str], offset: str, upto: int, after: int | None = None
    ) -> tuple[int, int]:
        # Sums of the hash's high and low 32 bits: exact in BIGINT (no ANSI overflow)
        # for up to 2^31 rows, and recombined into the sum of the hashes in Python.
        h = _hash(columns)
        df = self._table(source).where(F.col(quote(offset)) <= F.lit(upto))
        if after is not None:
            df = df.where(F.col(quote(offset)) > F.lit(after))
        row = df.agg(F.count(F.lit(1)), F.sum(F.shiftright(h, 32)), F.sum(h.bitwiseAND(F.lit(0xFFFFFFFF)))).collect()[0]
        return int(row[0]), combine(row[1] or 0, row[2] or 0)

    def files(self, source: str) -> list[str] | None:
        if self.refresh_sources:
            self.spark.catalog.refreshTable(source)
        listed = sorted(self._table(source).inputFiles())
        # Only parquet files are read back one by one (`count_upto`); a table of other
        # files, or of none (a view over a query, an in-memory relation), is checked whole.
        return listed if listed and all(f.endswith(".parquet") for f in listed) else None

    def count_upto(self, source: str, files: Sequence[str], offset: str, upto: int) -> int | None:
        if _all_above(files, offset, upto):
            return 0
        try:
            base = _partition_base(files[0])  # a table partitioned by, say, the offset itself
            reader = self.spark.read if base is None else self.spark.read.option("basePath", base)
            added = reader.parquet(*files)
            return int(added.where(F.col(quote(offset)) <= F.lit(upto)).count())
        except Exception:  # an offset column these files do not have, say: check the whole table
            return None

    def oldest_offset(self, source: str, offset: str, upto: int) -> int | None:
        df = self._table(source).where(F.col(quote(offset)) <= F.lit(upto))
        value = df.agg(F.min(F.col(quote(offset)))).collect()[0][0]
        return None if value is None else int(value)

    def sample(self, source: str, select: Sequence[tuple[str, str]], offset: str, upto: int) -> pa.Table:
        df = self._table(source).where(F.col(quote(offset)) <= F.lit(upto)).orderBy(F.col(quote(offset)).desc())
        return _arrow(df.select([F.col(quote(src)).alias(dst) for src, dst in select]).limit(1))

    def snapshot_diff(self, source: str, columns: Sequence[str], new: Path, old: Path | None) -> pa.Table:
        return _arrow(self.snapshot_diff_frame(source, columns, new, old))

    def snapshot_diff_frame(self, source: str, columns: Sequence[str], new: Path, old: Path | None) -> DataFrame:
        current = self._table(source).select([F.col(quote(c)).alias(col_name(i)) for i, c in enumerate(columns)])
        # Write first, then diff the written copy: the diff and the snapshot kept for the
        # next refresh are then the same data, even if the table changes meanwhile.
        current.write.mode("overwrite").parquet(str(new))
        schema = _readable(current.schema)  # known: no need for Spark to infer it from the files
        now = self.spark.read.schema(schema).parquet(str(new)).withColumn(WEIGHT, F.lit(1).cast("bigint"))
        if old is None:
            return now
        # now EXCEPT ALL before, and before EXCEPT ALL now, in one aggregation: each
        # row's count in `now` minus its count in `before` (NULLs group together, as
        # in EXCEPT ALL), which is the Z-set difference itself.
        before = self.spark.read.schema(schema).parquet(str(old)).withColumn(WEIGHT, F.lit(-1).cast("bigint"))
        keys = [col_name(i) for i in range(len(columns))]
        return now.unionByName(before).groupBy(*keys).agg(F.sum(WEIGHT).alias(WEIGHT)).where(F.col(WEIGHT) != 0)


def _all_above(files: Sequence[str], offset: str, upto: int) -> bool:
    """Whether the footers of these local parquet files show every row's `offset` above
    `upto` (each row group's minimum): then no Spark job need count them. A new batch's
    file usually does; anything else (a remote file, no statistics, a column the files
    do not hold, as when the offset is a partition column) is left to Spark."""
    try:
        for uri in files:
            parsed = urlparse(uri)
            if parsed.scheme != "file":
                return False
            meta = pq.ParquetFile(unquote(parsed.path)).metadata
            leaf = next((j for j in range(meta.num_columns) if meta.schema.column(j).path == offset), None)
            if leaf is None:
                return False
            for g in range(meta.num_row_groups):
                group = meta.row_group(g)
                if group.num_rows == 0:
                    continue
                stats = group.column(leaf).statistics
                if stats is None or not stats.has_min_max or not isinstance(stats.min, int) or stats.min <= upto:
                    return False
    except (OSError, ValueError, pa.ArrowException):
        return False
    return True


_GLOB = frozenset("*?[]{}\\")  # would make a path a pattern to Spark's reader
_PARQUET_FORMAT = "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat"


def _narrowed(spark: SparkSession, df: DataFrame, files: Sequence[str]) -> DataFrame | None:
    """`df` as read from `files` alone (a subset of its `inputFiles()`), if it is a bare
    scan of listed parquet files in Spark's own format (not a table format's, such as
    Delta's, whose files need its log): no filter, projection or join over the
    relation, no partition or bucket columns. The reader keeps the relation's schema
    and options (a rebase mode, say). None if `df` is anything else, or if a file's
    URI would not name it literally as a path (escapes, glob characters): then read
    `df` whole."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        if plan.getClass().getSimpleName() != "LogicalRelation" or plan.isStreaming():
            return None
        relation = plan.relation()
        if (
            relation.getClass().getSimpleName() != "HadoopFsRelation"
            # exactly Spark's own: a subclass (Delta's) may map columns or delete rows
            or relation.fileFormat().getClass().getName() != _PARQUET_FORMAT
            or relation.location().getClass().getSimpleName() != "InMemoryFileIndex"
            or relation.partitionSchema().length()
            or relation.bucketSpec().isDefined()
        ):
            return None
        jvm: Any = spark.sparkContext._jvm
        options = dict(jvm.scala.jdk.javaapi.CollectionConverters.asJava(relation.options()))
        schema = T.StructType.fromJson(json.loads(relation.dataSchema().json()))
    except (AttributeError, Py4JError):  # not a classic session's DataFrame, say
        return None
    if any(unquote(f) != f or _GLOB & set(f) or not urlparse(f).scheme for f in files):
        return None
    if not files:
        return df.where(F.lit(False))
    options = {key: value for key, value in options.items() if key not in ("path", "paths")}
    narrowed = spark.read.schema(schema).options(**options).parquet(*files)
    return narrowed if narrowed.schema == df.schema else None


def _partition_base(path: str) -> str | None:
    """The table directory above the `column=value` directories of a partitioned table's
    file (Spark then reads the partition columns back from the path), or None."""
    parts = path.split("/")
    at = next((i for i, part in enumerate(parts[:-1]) if "=" in part), None)
    return None if at is None else "/".join(parts[:at])


def _hash(columns: Sequence[str]) -> SparkColumn:
    return F.xxhash64(*[F.col(quote(c)) for c in columns]).alias(HASH)


def _readable(schema: T.StructType) -> T.StructType:
    """The schema with CHAR/VARCHAR as STRING, as parquet files hold them."""
    fields = [
        T.StructField(f.name, T.StringType() if isinstance(f.dataType, (T.CharType, T.VarcharType)) else f.dataType)
        for f in schema.fields
    ]
    return T.StructType(fields)


def _arrow(df: DataFrame) -> pa.Table:
    table: Any = df.toArrow()
    assert isinstance(table, pa.Table)
    return table


__all__ = ["SparkEngine"]

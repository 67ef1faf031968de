"""Spark types to dbspc types: how the Spark engine describes its tables.

dbspc compiles views against `CREATE TABLE` text, so a Spark job's source tables are
described to it by Arrow schemas generated here from the Spark catalog (the refresh
layer turns those into DDL, runtime/refresh/schema.py). The mapping is exact
(each Spark type that dbspc can hold maps to one SQL type) and anything else is refused
up front, naming the table and the column, rather than converted lossily at run time.

Nullability is not carried over: Spark reports most columns as nullable anyway, and a
table's nullability can flip between sessions (a parquet table read back is always
nullable), which would change the program text and make a checkpoint unusable.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T

from dbspc.compiler.errors import InputError
from dbspc.compiler.types import SqlType, decimal
from dbspc.runtime.refresh.schema import SUPPORTED_TYPES, arrow_type, parse_type, quote, spark_schema

__all__ = ["arrow_schema", "from_spark_type", "parse_type", "quote", "spark_schema"]

# Spark's simple types, by the name of the SQL type each holds.
_SIMPLE: dict[type, str] = {
    T.ByteType: "TINYINT",
    T.ShortType: "SMALLINT",
    T.IntegerType: "INT",
    T.LongType: "BIGINT",
    T.FloatType: "FLOAT",
    T.DoubleType: "DOUBLE",
    T.BooleanType: "BOOLEAN",
    T.DateType: "DATE",
    T.TimestampType: "TIMESTAMP",
    T.TimestampNTZType: "TIMESTAMP_NTZ",
}


def from_spark_type(dtype: T.DataType, table: str, column: str) -> SqlType:
    """The dbspc type of a Spark column, or an error naming the table and the column."""
    if type(dtype) in _SIMPLE:
        return SqlType(_SIMPLE[type(dtype)])
    if isinstance(dtype, T.DecimalType):
        return decimal(dtype.precision, dtype.scale)
    if isinstance(dtype, (T.VarcharType, T.CharType)):
        return SqlType("STRING")  # Spark pads CHAR(n) when it reads
    if isinstance(dtype, T.StringType):
        collation = getattr(dtype, "collation", "UTF8_BINARY")
        if collation not in ("UTF8_BINARY", None):
            raise InputError(
                f"column '{column}' of table '{table}' is STRING COLLATE {collation}; dbspc compares strings "
                "byte-wise (UTF8_BINARY) only: cast it in a Spark view"
            )
        return SqlType("STRING")
    raise InputError(
        f"column '{column}' of table '{table}' has Spark type {dtype.simpleString()}, which dbspc does not "
        f"support; supported: {SUPPORTED_TYPES}"
    )


def arrow_schema(schema: T.StructType, table: str) -> pa.Schema:
    """A Spark schema as the Arrow schema the refresh layer reads (runtime/refresh/
    schema.py): each column with the Arrow type of its dbspc type. A column of a type
    dbspc cannot hold gets Arrow type null with its Spark type in the field metadata:
    the refresh layer reports it only if a view reads it."""
    fields = []
    for f in schema.fields:
        try:
            fields.append(pa.field(f.name, arrow_type(from_spark_type(f.dataType, table, f.name))))
        except InputError as e:
            fields.append(pa.field(f.name, pa.null(), metadata={"type": f.dataType.simpleString(), "why": e.message}))
    return pa.schema(fields)

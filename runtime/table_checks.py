"""What a table accepts as a change: its own columns, no NULL in a NOT NULL column, and
no delete of a row that is not there.

Both execution modes check a change here before any operator sees it: the driver
against its whole integrated table (Pipeline), the distributed mode per bucket against
the bucket's share of it (runtime/distributed/table_stage.py), which holds every copy of
the rows a delete names because buckets are a hash of the whole row.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from dbspc.compiler.catalog import TableSchema
from dbspc.compiler.errors import InputError
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import WEIGHT, ZSet, col_name, consolidate_frame, take


def table_trace(schema: TableSchema) -> Trace:
    """The integrated table, indexed by the whole row (what a delete check probes)."""
    return Trace(schema.types, tuple(range(len(schema.types))))


def checked(schema: TableSchema, held: Trace, change: ZSet) -> ZSet:
    """`change` consolidated, or an InputError naming the table and the first bad row.
    `held` is the table's contents before the change (not modified here), indexed by
    the whole row or by some of its columns (a join's integral of the table)."""
    table = schema.name
    if change.types != schema.types:
        got = ", ".join(t.sql() for t in change.types)
        want = ", ".join(f"{c.name} {c.type.sql()}" for c in schema.columns)
        raise InputError(f"change for table '{table}' has columns ({got}); the table has ({want})")
    change = change.consolidate()
    not_null = [col_name(i) for i, c in enumerate(schema.columns) if not c.nullable]
    if any(change.frame.get_column(c).null_count() for c in not_null):
        bad = change.frame.filter(pl.col(WEIGHT) > 0).filter(pl.any_horizontal(pl.col(not_null).is_null()))
        if bad.height:
            cols = [c.name for c in schema.columns if not c.nullable]
            raise InputError(f"NULL inserted into NOT NULL column(s) {', '.join(cols)} of table '{table}'")
    removing = change.frame.get_column(WEIGHT).to_numpy() < 0
    if removing.any():
        at = np.flatnonzero(removing)
        hashes = None if change.hashes is None else change.hashes[at]
        # (hashed by the key once for the whole change: the step's joins and the insert
        # of a join's integral of the table read the same)
        keys = change.key_hashes(held.key)[at] if held.key else None
        _check_deletes(schema, held, change, take(change.frame, at), hashes, keys)
    return change


def _check_deletes(
    schema: TableSchema,
    held: Trace,
    change: ZSet,
    deletes: pl.DataFrame,
    hashes: np.ndarray | None,
    keys: np.ndarray | None,
) -> None:
    # The table's rows with a deleted row's value, plus the deletes: a row left with a
    # negative weight is deleted more often than it is there. `hashes`, `keys`: the
    # deletes' row and key hashes, from the change.
    weights = held.weights_of(deletes, hashes, keys)
    if weights is not None:
        short = take(deletes, np.flatnonzero(weights + deletes.get_column(WEIGHT).to_numpy() < 0))
    else:  # rows with equal hashes: an exact lookup of the rows present
        present = held.lookup(deletes, [change.columns[i] for i in held.key])
        after = consolidate_frame(pl.concat([present, deletes], how="vertical")) if present.height else deletes
        short = after.filter(pl.Series(after.get_column(WEIGHT).to_numpy() < 0))
    if short.height:
        row = short.row(0)
        shown = ", ".join(f"{n}={_show(v)}" for n, v in zip(schema.names, row[: len(schema.names)], strict=True))
        raise InputError(
            f"cannot delete {short.height} row(s) from table '{schema.name}' that are not there, e.g. ({shown})"
        )


def _show(v: object) -> str:
    return "NULL" if v is None else repr(v)

"""Vectorized kernels of the ARRAY functions of compiler/frontend/bind_arrays.py."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from dbspc.compiler.logical.scalar import Call, Lit

Kernel = Callable[[list[pl.Expr], Call], pl.Expr]


def _size(args: list[pl.Expr], call: Call) -> pl.Expr:
    return args[0].list.len().cast(pl.Int32)  # NULL stays NULL (Spark 4, ANSI)


def _contains(args: list[pl.Expr], call: Call) -> pl.Expr:
    array, value = args
    found = array.list.contains(value)
    return pl.when(array.is_null() | value.is_null()).then(None).otherwise(found)


def _sort(args: list[pl.Expr], call: Call) -> pl.Expr:
    flag = call.args[1]
    ascending = not isinstance(flag, Lit) or flag.value is not False
    # Spark: NULL elements first ascending, last descending (none occur here)
    return args[0].list.sort(descending=not ascending, nulls_last=not ascending)


KERNELS: dict[str, Kernel] = {"array_size": _size, "array_contains": _contains, "sort_array": _sort}

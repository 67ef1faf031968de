"""One step of the random-stream checks (Algorithm 4.8: I(Q^Δ(Δ)) = Q(I(Δ)) at every step)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dbspc.runtime.oracle import assert_same_rows
from dbspc.runtime.zset import ZSet


def add(a: ZSet, b: ZSet) -> ZSet:
    return ZSet.concat([a, b], a.types).consolidate()


def comparable_rows(z: ZSet) -> list[tuple[tuple[object, ...], int]]:
    """The Z-set's rows with NaN as a marker, so that equal rows compare equal in Python."""
    return [(tuple("NaN" if isinstance(v, float) and math.isnan(v) else v for v in row), w) for row, w in z.to_rows()]


def check_step(
    integrated: dict[str, ZSet],
    deltas: Mapping[str, ZSet],
    full_deltas: Mapping[str, ZSet],
    expected: Mapping[str, Any],
    context: str,
) -> None:
    """Per view: the incremental and lifted deltas are equal, and the integral of the
    incremental ones (updated in `integrated`) is a set of rows equal to `expected`."""
    for view in integrated:
        where = f"{context}, view {view}"
        assert comparable_rows(deltas[view]) == comparable_rows(full_deltas[view]), where
        integrated[view] = add(integrated[view], deltas[view])
        assert integrated[view].is_positive(), where
        assert_same_rows(integrated[view], expected[view], where)

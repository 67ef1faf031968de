"""Each table's change checked against its bucket's share of the table (distributed).

A change is checked before any operator sees it, as in driver mode (table_checks.py):
its columns, NOT NULL, and that every deleted row is there. The check needs the
table's contents, so each table is kept integrated, spread over the buckets by a hash
of some of its columns (plan.py's `Check`): all copies of a row are in one bucket, so a
bucket's share decides a delete alone. A table read by one key is shared by that key
and checked in the task of the stage reading it, whose channels then take the checked
rows where they are; another is shared by the whole row and checked in stage 0, whose
checked rows leave for the channels reading the table as exchange files.

A failed check raises in its task, and the refresh commits nothing: no bucket's share
moves past the committed refresh (bucket_state.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from dbspc.compiler.catalog import TableSchema
from dbspc.runtime.table_checks import checked, table_trace
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet

TABLE_STAGE = 0  # its state lives beside the circuit's stages (1, 2, ...) as s0


def share_state(stage: int) -> int:
    """The state stage of the shares of the tables checked in `stage` (plan.py's
    `Check`): s0 for stage 0, s-<k> beside stage k's own state s<k>."""
    return -stage


class TableShare:
    """One bucket's share of every table; holds state like a StageExecutor."""

    def __init__(self, tables: Mapping[str, TableSchema]) -> None:
        self.schemas = dict(tables)
        self.held = {name: table_trace(schema) for name, schema in tables.items()}
        self.steps = 0

    def check(self, changes: Mapping[str, ZSet]) -> tuple[dict[str, ZSet], list[Callable[[], None]]]:
        """Each change checked (raises on the first bad one), and the inserts that make
        the share current, to run once every check has passed."""
        out = {name: checked(self.schemas[name], self.held[name], z) for name, z in changes.items()}
        return out, [partial(self.held[name].insert, z) for name, z in out.items()]

    def traces(self) -> dict[str, Trace]:
        return {f"table.{name}": t for name, t in self.held.items()}

    def meta(self) -> dict[str, object]:
        return {"steps": self.steps}

    def restored(self, meta: Mapping[str, object]) -> None:
        self.steps = int(str(meta["steps"]))

    def state_sizes(self) -> dict[str, tuple[int, int]]:
        return {name: (len(t), t.nbytes()) for name, t in self.held.items()}

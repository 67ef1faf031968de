"""What each refresh did, in three forms: a log line, a `metrics()` record, and a row
of the metrics table `<output>/_metrics` (one parquet file per refresh).

The figures: the refresh id and when it committed, each source's committed offset,
rows read per table and written per view, the state kept (operator traces and the
integrated tables: rows and bytes), and seconds per phase (transfer, compute,
write_back, checkpoint, publish, total)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from dbspc.runtime.refresh import storage as store
from dbspc.runtime.refresh.storage import Storage
from dbspc.runtime.render import human_bytes
from dbspc.runtime.trace import Trace

if TYPE_CHECKING:
    from dbspc.runtime.refresh.job import RefreshResult

METRICS = "_metrics"
PHASES = ("transfer", "compute", "write_back", "checkpoint", "publish", "total")

SCHEMA = pa.schema(
    [
        ("refresh_id", pa.int64()),
        ("committed_at", pa.timestamp("us", tz="UTC")),
        ("rows_in", pa.int64()),
        ("rows_out", pa.int64()),
        ("state_rows", pa.int64()),
        ("state_bytes", pa.int64()),
        *[(f"{p}_seconds", pa.float64()) for p in PHASES],
        ("offsets", pa.string()),  # JSON: table -> committed offset
        ("rows_in_by_table", pa.string()),  # JSON
        ("rows_out_by_view", pa.string()),  # JSON
    ]
)


def record(
    result: RefreshResult, offsets: Mapping[str, int | None], tables: Sequence[Trace], now: float
) -> dict[str, Any]:
    out_rows = dict(result.rows_out)
    state_rows = sum(r for r, _ in result.state.values()) + sum(len(t) for t in tables)
    state_bytes = sum(b for _, b in result.state.values()) + sum(t.nbytes() for t in tables)
    return {
        "refresh_id": result.refresh_id,
        "committed_at": dt.datetime.fromtimestamp(now, dt.UTC),
        "offsets": dict(offsets),
        "rows_in": sum(result.rows_read.values()),
        "rows_in_by_table": dict(result.rows_read),
        "rows_out": sum(out_rows.values()),
        "rows_out_by_view": out_rows,
        "state_rows": state_rows,
        "state_bytes": state_bytes,
        "seconds": {p: round(result.timings.get(p, 0.0), 6) for p in PHASES},
    }


def line(r: Mapping[str, Any]) -> str:
    offsets = " ".join(f"{t}={o}" for t, o in sorted(r["offsets"].items()))
    ins = ", ".join(f"{t} {n}" for t, n in sorted(r["rows_in_by_table"].items()))
    outs = ", ".join(f"{v} {n}" for v, n in sorted(r["rows_out_by_view"].items()))
    phases = " ".join(f"{p} {s:.3f}s" for p, s in r["seconds"].items())
    return (
        f"refresh {r['refresh_id']} committed: offsets {offsets or '-'}; rows in {r['rows_in']} ({ins or '-'}); "
        f"rows out {r['rows_out']} ({outs or '-'}); "
        f"state {r['state_rows']} rows {human_bytes(r['state_bytes'])}; {phases}"
    )


def write(storage: Storage, r: Mapping[str, Any]) -> None:
    row = {
        "refresh_id": [r["refresh_id"]],
        "committed_at": [r["committed_at"]],
        "rows_in": [r["rows_in"]],
        "rows_out": [r["rows_out"]],
        "state_rows": [r["state_rows"]],
        "state_bytes": [r["state_bytes"]],
        **{f"{p}_seconds": [r["seconds"][p]] for p in PHASES},
        "offsets": [json.dumps(r["offsets"], sort_keys=True)],
        "rows_in_by_table": [json.dumps(r["rows_in_by_table"], sort_keys=True)],
        "rows_out_by_view": [json.dumps(r["rows_out_by_view"], sort_keys=True)],
    }
    store.write_parquet(storage, f"{METRICS}/r{r['refresh_id']:08d}.parquet", pa.table(row, schema=SCHEMA))

"""The tables of docs/scale-out.md from a raw output of run.py (its JSON lines).

    PYTHONPATH=$PWD /work/main/.venv/bin/python -m bench.scale_spike.report bench/results/spark_scale-<date>.txt
"""

from __future__ import annotations

import json
import sys
from typing import Any

MB = 1 << 20


def _table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
                     + ["| " + " | ".join(r) + " |" for r in rows])


def design_b(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        out.append([f"{r['orders']:,}", "load" if r["refresh"] == 0 else str(r["refresh"]), f"{r['wall_s']:.2f}",
                    f"{r['join.load_s'] + r['agg.load_s']:.2f}", f"{r['join.compute_s'] + r['agg.compute_s']:.2f}",
                    f"{r['join.write_s'] + r['agg.write_s']:.2f}", f"{r['spark_sql_s']:.2f}",
                    f"{r['shuffleWriteBytes'] / MB:.2f}", f"{r['state_bytes'] / MB:.1f}",
                    f"{r['state_read_bytes'] / MB:.1f}", f"{r['read_amplification']:.2f}",
                    f"{int(r['orders.cache_hit'])}/8", f"{r['orders.written_bytes'] / MB:.2f}",
                    f"{int(r['orders.merged_rows']):,}",
                    f"{r['orders.selective_rows'] / max(1, r['orders.state_rows']):.2f}",
                    f"{r['customers.selective_rows'] / max(1, r['customers.state_rows']):.2f}",
                    f"{r['driver_py_peak_mb']:.0f}", str(r["correct"])])
    return _table(["orders", "refresh", "wall s", "load s", "compute s", "write s", "Spark SQL s", "shuffle MB",
                   "state MB", "read MB", "read/state", "hits", "orders written MB", "orders merged rows",
                   "orders row-group share", "customers row-group share", "driver py MB", "correct"], out)


def design_a(rows: list[dict[str, Any]]) -> str:
    out = []
    for r in rows:
        out.append([f"{r['orders']:,}", "load" if r["refresh"] == 0 else str(r["refresh"]), f"{r['wall_s']:.1f}",
                    f"{r.get('ms.addBatch', 0) / 1000:.1f}", f"{r.get('op1.allUpdatesTimeMs', 0) / 1000:.1f}",
                    f"{r['spark_sql_s']:.2f}", f"{r['shuffleWriteBytes'] / MB:.2f}",
                    f"{int(r.get('op1.numRowsTotal', 0)):,}",
                    f"{int(r.get('op1.rocksdbGetCount', 0)):,}",
                    f"{r.get('op1.rocksdbBytesCopied', 0) / MB:.1f}", f"{r.get('op1.rocksdbSstFileSize', 0) / MB:.1f}",
                    f"{int(r.get('op1.rocksdbNumLoadedFromDfs', 0))}",
                    f"{r.get('op1.rocksdbLoadLatencyMs', 0) / 1000:.1f}",
                    f"{r['checkpoint_bytes'] / MB:.1f}", f"{r['driver_py_peak_mb']:.0f}", str(r["chained"]),
                    str(r["correct"])])
    return _table(["orders", "refresh", "wall s", "addBatch s", "join state updates s (task sum)", "Spark SQL s",
                   "shuffle MB", "join state rows", "join gets", "join MB loaded from checkpoint",
                   "join SST MB", "stores loaded from checkpoint", "load s", "checkpoint MB", "driver py MB",
                   "chained", "correct"], out)


def main() -> None:
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    print("### (b) bucketed state\n")
    print(design_b([r for r in rows if r["design"] == "b"]))
    print("\n### (a) transformWithStateInPandas + RocksDB\n")
    print(design_a([r for r in rows if r["design"] == "a"]))


if __name__ == "__main__":
    main()

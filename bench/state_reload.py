"""A trace's reload from a checkpoint: save one run of N orders (the join's integral of
bench/join_groupby.py's orders, keyed by customer) with StateStore, then load it into a
fresh trace five times and print the median, as a restart or a distributed bucket's
cache miss does.

    .venv/bin/python bench/state_reload.py [--orders 3000000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# appended, not put first: a PYTHONPATH naming another checkout must win (before/after runs)
sys.path.append(str(Path(__file__).resolve().parent.parent))

from bench.join_groupby import orders_frame
from dbspc.compiler.types import BIGINT, INT, decimal
from dbspc.runtime.refresh.checkpoint import Manifest, StateStore
from dbspc.runtime.trace import Trace
from dbspc.runtime.zset import ZSet

TYPES = (BIGINT, INT, decimal(10, 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=3_000_000)
    n = parser.parse_args().orders
    trace = Trace(TYPES, (1,))
    trace.insert(ZSet.from_frame(orders_frame(np.arange(n), np.random.default_rng(3)), TYPES))
    trace.settle()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        section, _ = StateStore(root).save(1, {"orders": trace})
        manifest = Manifest(refresh_id=1, program_hash="", program={}, state=section)
        times = []
        for _ in range(5):
            back = Trace(TYPES, (1,))
            t = time.perf_counter()
            StateStore(root).load(manifest, {"orders": back})
            times.append(time.perf_counter() - t)
            assert len(back) == len(trace)
    print(f"{n:,} rows in {trace.run_count} run(s): reload median {statistics.median(times) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()

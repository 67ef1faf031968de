# In one process, alternating blocks of 20 steps: numpy's stable argsort against spine.argsort_hashes for a probe's hash order.
import sys, time, statistics
sys.path.insert(0, "/work/main")
import numpy as np
from bench.calls_per_step import join_groupby, pydbsp_join, recursion
from dbspc.runtime import zset, trace
new = zset.argsort_hashes
def old(hashes):
    if len(hashes) < 50_000:
        return np.argsort(hashes, kind="stable")
    return new(hashes)
which = sys.argv[1] if len(sys.argv) > 1 else "jg"
n = 600
steps = {"jg": lambda: join_groupby(1_000_000, n), "pj": lambda: pydbsp_join(100_000, n), "tc": lambda: recursion("tc", 20000, n)}[which]()
for s in steps[:20]: s()
times = {"old": [], "new": []}
i = 20; mode = 0
while i < len(steps):
    name = ["old", "new"][mode]
    zset.argsort_hashes = trace.argsort_hashes = old if name == "old" else new
    for s in steps[i:i + 20]:
        t0 = time.perf_counter(); s(); times[name].append(time.perf_counter() - t0)
    i += 20; mode ^= 1
for k, v in times.items():
    v.sort(); print(which, k, "median ms %.3f  mean %.3f  p90 %.3f" % (statistics.median(v) * 1e3, statistics.mean(v) * 1e3, v[int(len(v) * .9)] * 1e3))

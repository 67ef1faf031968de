import sys, time, os
sys.path.insert(0, "/work/main")
from bench.calls_per_step import join_groupby, pydbsp_join, recursion
from dbspc.runtime import trace
fast = trace.Trace._merged_in_one_pass
def off(self, old, new): return False
which = sys.argv[1] if len(sys.argv) > 1 else "jg"
n = 600
steps = {"jg": lambda: join_groupby(1_000_000, n), "pj": lambda: pydbsp_join(100_000, n), "tc": lambda: recursion("tc", 20000, n)}[which]()
for s in steps[:20]: s()
times = {"old": [], "new": []}
i = 20; mode = 0
while i < len(steps):
    name = ["old", "new"][mode]
    trace.Trace._merged_in_one_pass = off if name == "old" else fast
    for s in steps[i:i + 20]:
        t0 = time.perf_counter(); s(); times[name].append(time.perf_counter() - t0)
    i += 20; mode ^= 1
import statistics
for k, v in times.items():
    v.sort(); print(k, "median ms %.3f  mean %.3f  p90 %.3f" % (statistics.median(v) * 1e3, statistics.mean(v) * 1e3, v[int(len(v) * .9)] * 1e3))

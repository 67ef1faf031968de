# In one process, alternating blocks of 20 steps: IncrementalAggregate._step_linear/_step_table of ac70682 (git show ac70682:runtime/kernels/aggregate.py > /tmp/w/old_aggregate.py), against main's GroupSums.gather path.
import sys, time, importlib.util, statistics
sys.path.insert(0, "/work/main")
import numpy as np
from bench.calls_per_step import join_groupby, pydbsp_join
from dbspc.runtime.kernels import aggregate as ag
from dbspc.runtime.kernels.group_sums import GroupSums
def lookup(self, keys):
    present, sums = self.table.lookup(keys)
    return present.astype(bool), sums
GroupSums.lookup = lookup
spec = importlib.util.spec_from_file_location("dbspc.runtime.kernels.old_aggregate", "/tmp/w/old_aggregate.py")
old = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = old
import dbspc.runtime.registry as reg
saved = dict(getattr(reg, "_EVALUATORS", {}))
try:
    spec.loader.exec_module(old)
except Exception as e:
    print("load", type(e).__name__, e)
C = ag.IncrementalAggregate
new_fns = (C._step_linear, C._step_table)
old_fns = (old.IncrementalAggregate._step_linear, old.IncrementalAggregate._step_table)
which = sys.argv[1] if len(sys.argv) > 1 else "jg"
n = 600
steps = {"jg": lambda: join_groupby(1_000_000, n), "pj": lambda: pydbsp_join(100_000, n)}[which]()
for s in steps[:20]: s()
times = {"old": [], "new": []}
i = 20; mode = 0
while i < len(steps):
    name = ["old", "new"][mode]
    C._step_linear, C._step_table = old_fns if name == "old" else new_fns
    for s in steps[i:i + 20]:
        t0 = time.perf_counter(); s(); times[name].append(time.perf_counter() - t0)
    i += 20; mode ^= 1
for k, v in times.items():
    v.sort(); print(which, k, "median ms %.3f  mean %.3f  p90 %.3f" % (statistics.median(v) * 1e3, statistics.mean(v) * 1e3, v[int(len(v) * .9)] * 1e3))

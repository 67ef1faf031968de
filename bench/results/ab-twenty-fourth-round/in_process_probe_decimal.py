# In one process, alternating blocks of 20 steps: the old held_weights (spine.so built at ac70682, copied to /tmp/w/old/) and the old decimal column builder, against main's.
import sys, time, importlib.util, statistics
sys.path.insert(0, "/work/main")
import numpy as np, pyarrow as pa, polars as pl
from bench.calls_per_step import join_groupby, pydbsp_join, recursion
from dbspc.runtime import trace
from dbspc.runtime.kernels import aggregate as ag
from dbspc.runtime.native import spine as new_spine
spec = importlib.util.spec_from_file_location("old.spine", "/tmp/w/old/spine.so")
old_spine = importlib.util.module_from_spec(spec); spec.loader.exec_module(old_spine)
new_dec = ag.decimal_of_int64
def old_dec(name, values, valid, precision, scale):
    words = np.stack([values, values >> 63], axis=1).ravel()
    validity = None if valid is None or valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    decimals = pa.Array.from_buffers(pa.decimal128(precision, scale), len(values), [validity, pa.py_buffer(words)])
    return pl.Series(decimals)
which = sys.argv[1] if len(sys.argv) > 1 else "jg"
n = 600
steps = {"jg": lambda: join_groupby(1_000_000, n), "pj": lambda: pydbsp_join(100_000, n), "tc": lambda: recursion("tc", 20000, n)}[which]()
for s in steps[:20]: s()
times = {"old": [], "new": []}
i = 20; mode = 0
while i < len(steps):
    name = ["old", "new"][mode]
    trace.spine.held_weights = old_spine.held_weights if name == "old" else new_spine.held_weights
    ag.decimal_of_int64 = old_dec if name == "old" else new_dec
    for s in steps[i:i + 20]:
        t0 = time.perf_counter(); s(); times[name].append(time.perf_counter() - t0)
    i += 20; mode ^= 1
for k, v in times.items():
    v.sort(); print(which, k, "median ms %.3f  mean %.3f  p90 %.3f" % (statistics.median(v) * 1e3, statistics.mean(v) * 1e3, v[int(len(v) * .9)] * 1e3))

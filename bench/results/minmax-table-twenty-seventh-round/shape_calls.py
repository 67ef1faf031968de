"""Python calls a step of one bench/view_shapes.py view makes (cProfile's count over 30
steps at 200k orders), for one checkout: TREE=path V=view python shape_calls.py."""

import cProfile
import importlib.util
import os
import pstats
import sys

import numpy as np

TREE = os.environ.get("TREE", ".")
sys.path.insert(0, TREE)
spec = importlib.util.spec_from_file_location("view_shapes", f"{TREE}/bench/view_shapes.py")
assert spec is not None and spec.loader is not None
shapes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shapes)

from dbspc.runtime.pipeline import Pipeline  # noqa: E402
from dbspc.runtime.zset import ZSet  # noqa: E402

name, n, steps = os.environ["V"], 200_000, 40
rng = np.random.default_rng(7)
p = Pipeline.from_sql(f"{shapes.TABLES}CREATE VIEW v AS {shapes.VIEWS[name]};")
customers = shapes.customers_frame(rng)
orders = shapes.orders_frame(np.arange(n), rng)
p.step({"customers": ZSet.from_frame(customers, p.table_types("customers"))})
p.step({"orders": ZSet.from_frame(orders, p.table_types("orders"))})
changes = [ZSet.from_frame(c, p.table_types("orders")) for c in shapes.changes(orders, steps, 1000, rng)]
for z in changes[:10]:
    p.step({"orders": z})
profile = cProfile.Profile()
profile.enable()
for z in changes[10:]:
    p.step({"orders": z})
profile.disable()
print(name, "calls/step", round(pstats.Stats(profile).total_calls / (steps - 10)))

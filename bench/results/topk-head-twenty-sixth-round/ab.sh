#!/bin/sh
# The global top 10 (bench/view_shapes.py --views topk) and bench/topk.py (a global top 10
# over 1M rows whose changes delete 5 of the current top 20 each step) over two checkouts,
# alternated: OLD, a worktree at 73995a8 (the twenty-fifth round's end, its native modules
# copied from main: no .pyx changed), and main. Run from the repository's root:
#   OLD=/path/to/worktree sh bench/results/topk-head-twenty-sixth-round/ab.sh > OUT
for round in 1 2; do
  for n in 200000 2000000; do
    for tree in "$OLD" .; do
      echo "== $tree $n"
      PYTHONPATH=$tree .venv/bin/python "$tree/bench/view_shapes.py" --orders $n --duckdb 9 --views topk | tail -1
    done
  done
done
for round in 1 2; do
  for tree in "$OLD" .; do
    echo "== $tree bench/topk.py"
    PYTHONPATH=$tree .venv/bin/python "$tree/bench/topk.py" --rows 1000000 --steps 60 --old-steps 2 | grep new
  done
done

#!/bin/sh
# bench/view_shapes.py (main's, with the shapes of this round) over two checkouts, alternated:
# 990b2b1 (the twenty-fourth round's end, its native modules copied from main: no .pyx changed) and main.
# Run from /work/main: sh bench/results/view-shapes-twenty-fifth-round/ab.sh > OUT
for round in 1 2; do
  for tree in /work/wt-before /work/main; do
    echo "# round $round tree $tree"
    PYTHONPATH=$tree .venv/bin/python bench/view_shapes.py --orders 200000 --steps 30 --warm 5 --duckdb 5
  done
done

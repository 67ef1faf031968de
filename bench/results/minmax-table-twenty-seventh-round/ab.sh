#!/bin/sh
# The view shapes the twenty-seventh round changed (MIN/MAX and LEFT JOIN) and those it
# should leave alone, over two checkouts alternated: OLD, a worktree at e654c31 (the
# twenty-sixth round's end, its native modules copied from main: no .pyx changed), and
# main. Run from the repository's root:
#   OLD=/path/to/worktree sh bench/results/minmax-table-twenty-seventh-round/ab.sh > OUT
for round in 1 2; do
  for tree in "$OLD" .; do
    echo "== $tree"
    PYTHONPATH=$tree .venv/bin/python "$tree/bench/view_shapes.py" --orders 200000 --steps 60 --duckdb 5 \
      --views minmax left_join sum avg count_distinct distinct_and_totals
  done
done

#!/bin/sh
# Connected components at the default 20,000 nodes (bench/recursion.py --views cc, 40 steps),
# OLD (a worktree at e654c31, native modules copied from main) and main alternated three
# times. Run from the repository's root: OLD=/path/to/worktree sh .../cc.sh > cc.txt
for round in 1 2 3; do
  for tree in "$OLD" .; do
    printf "%s " "$tree"
    PYTHONPATH=$tree .venv/bin/python "$tree/bench/recursion.py" --views cc --no-pydbsp --no-from-scratch --steps 40 | grep "^| cc"
  done
done
